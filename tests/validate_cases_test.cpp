/* dbosim validate — reference cases (validate/cases/) and the report arithmetic: error %, MAPE per group, the gate's
 * 2-point slack, strict case files. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "validate/CaseResult.hpp"
#include "validate/RefCases.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace dbosim::validate;

TEST_CASE("validate report: error, tolerance, MAPE per group, gate slack", "[quick]")
{
  std::vector<CaseResult> rows = {{"g", "a", "m", "us", 110, 100, 10, "s", "", ""},
                                  {"g", "b", "m", "us", 80, 100, 10, "s", "", ""},
                                  {"h", "c", "m", "us", 50, 100, 0, "s", "", ""}};
  CHECK(rows[0].error_pct() == Approx(10));
  CHECK(rows[0].pass());
  CHECK_FALSE(rows[1].pass());
  CHECK(rows[2].pass()); // tolerance 0: reported, not checked
  const auto g = summarize(rows);
  CHECK(g.at("g").mape_pct == Approx(15));
  CHECK(g.at("g").failed == 1);
  CHECK(g.at("h").mape_pct == Approx(50));
  CHECK(gate_violations(g, {{"g", 13.0}, {"h", 48.0}}, 2).empty()); // exactly +2 points holds
  CHECK(gate_violations(g, {{"g", 12.9}, {"h", 48.0}}, 2).size() == 1);
  CHECK(gate_violations(g, {{"g", 15.0}}, 2).size() == 1); // a group without a recorded MAPE fails the gate
  dbosim::test::TempDir dir;
  const std::string b = dir.write("b.yaml", baseline_yaml(g, rows));
  const auto back     = load_baseline(b);
  CHECK(back.at("g") == Approx(15));
  CHECK(results_csv(rows).find("g,b,\"m\",us,80,100,-20.000,10.0,FAIL,\"s\"") != std::string::npos);
}

TEST_CASE("validate: e2e rows are also summarized per engine and phase, outside the gate", "[quick]")
{
  std::vector<CaseResult> rows = {{"e2e", "a", "m", "ms", 110, 100, 20, "s", "vllm decode", ""},
                                  {"e2e", "b", "m", "ms", 130, 100, 20, "s", "vllm decode", ""},
                                  {"e2e", "c", "m", "ms", 95, 100, 20, "s", "sglang prefill", ""},
                                  {"deepep_ll", "d", "m", "us", 50, 100, 20, "s", "", ""}};
  const auto s                 = summarize_slices(rows);
  REQUIRE(s.size() == 2); // the row without a slice is in its group only
  CHECK(s.at("e2e vllm decode").mape_pct == Approx(20));
  CHECK(s.at("e2e vllm decode").failed == 1);
  CHECK(s.at("e2e sglang prefill").mape_pct == Approx(5));
  CHECK(summarize(rows).at("e2e").mape_pct == Approx(15));
  const std::string text = format_results(rows);
  CHECK(text.find("by engine and phase (not gated)") != std::string::npos);
  CHECK(text.find("e2e vllm decode") != std::string::npos);
  CHECK(format_results({rows[3]}).find("by engine and phase") == std::string::npos);
}

TEST_CASE("validate: a case the baseline's e2e list lacks is reported and not gated until re-recorded", "[quick]")
{
  std::vector<CaseResult> rows = {{"e2e", "a", "m", "ms", 110, 100, 20, "s", "vllm decode", "hopper"},
                                  {"e2e", "b", "m", "ms", 90, 100, 20, "s", "vllm decode", "hopper"},
                                  {"e2e", "new", "m", "ms", 900, 100, 20, "s", "vllm decode", "blackwell"},
                                  {"deepep_ll", "d", "m", "us", 150, 100, 20, "s", "", ""}};
  Baseline b;
  b.mape_pct     = {{"e2e", 10.0}, {"deepep_ll", 50.0}};
  b.cases["e2e"] = {"a", "b", "gone"}; // a recorded case no longer run just drops out
  std::vector<std::string> fresh;
  const auto kept = gated_rows(rows, b, fresh);
  CHECK(fresh == std::vector<std::string>{"new"});
  REQUIRE(kept.size() == 3);
  CHECK(summarize(kept).at("e2e").mape_pct == Approx(10));
  CHECK(gate_violations(summarize(kept), b.mape_pct, 2).empty());
  CHECK(gate_violations(summarize(rows), b.mape_pct, 2).size() == 1); // the whole group, new case in, would fail
  // A group the baseline lists no cases for is gated whole.
  b.cases.clear();
  fresh.clear();
  CHECK(gated_rows(rows, b, fresh).size() == 4);
  CHECK(fresh.empty());
}

TEST_CASE("validate: the baseline records each GPU generation's share of the e2e group, and reads it back", "[quick]")
{
  std::vector<CaseResult> rows = {{"e2e", "h1", "m", "ms", 110, 100, 20, "s", "vllm decode", "hopper"},
                                  {"e2e", "h2", "m", "ms", 70, 100, 20, "s", "vllm decode", "hopper"},
                                  {"e2e", "b1", "m", "ms", 150, 100, 20, "s", "trtllm decode", "blackwell"},
                                  {"deepep_ll", "d", "m", "us", 150, 100, 20, "s", "", ""}};
  const auto gens              = summarize_generations(rows);
  REQUIRE(gens.size() == 2); // rows without a generation are in their group only
  CHECK(gens.at("e2e hopper").mape_pct == Approx(20));
  CHECK(gens.at("e2e blackwell").mape_pct == Approx(50));
  CHECK(format_results(rows).find("by GPU generation (not gated)") != std::string::npos);
  dbosim::test::TempDir dir;
  const Baseline back = load_baseline_file(dir.write("b.yaml", baseline_yaml(summarize(rows), rows)));
  CHECK(back.mape_pct.at("e2e") == Approx(30));
  CHECK(back.cases.at("e2e") == std::vector<std::string>{"h1", "h2", "b1"});
  CHECK(back.generations.at("e2e").at("hopper").mape_pct == Approx(20));
  CHECK(back.generations.at("e2e").at("hopper").cases == std::vector<std::string>{"h1", "h2"});
  CHECK(back.generations.at("e2e").at("blackwell").cases == std::vector<std::string>{"b1"});
  CHECK(back.generations.count("deepep_ll") == 0);
  CHECK_THROWS_AS(load_baseline_file(dir.write("bad.yaml", "groups: {e2e: 1}\ngenerations:\n  e2e:\n    volta: "
                                                           "{mape_pct: 1, cases: [a]}\n")),
                  dbosim::InputError);
  CHECK_THROWS_AS(load_baseline_file(dir.write("bad2.yaml", "groups: {e2e: 1}\ngenerations:\n  e2e:\n    hopper: "
                                                            "{mape_pct: 1, cases: a}\n")),
                  dbosim::InputError);
}

TEST_CASE("validate cases: every shipped reference case is predicted through the public cost paths", "[quick]")
{
  const auto rows = run_reference_cases(std::string(DBOSIM_SOURCE_DIR) + "/validate/cases");
  std::set<std::string> groups;
  for (const CaseResult& r : rows) {
    INFO(r.group << " " << r.name);
    CHECK(std::isfinite(r.predicted));
    CHECK(r.predicted > 0);
    CHECK(r.tolerance_pct > 0);
    CHECK_FALSE(r.source.empty());
    groups.insert(r.group);
  }
  CHECK(groups == std::set<std::string>{"deepep_ht", "deepep_ll", "deepgemm", "flashmla", "mori"});
  CHECK(rows.size() == 53);
}

TEST_CASE("validate cases: strict case files", "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string good =
      "cases:\n  - {name: g, group: x, predictor: gemm, profile: h800, dtype: fp8, m: 64, n: 2112, "
      "k: 7168, metric: tflops, measured: 206, tolerance_pct: 10, tolerance_basis: b, source: s";
  dir.write("a.yaml", good + "}\n");
  CHECK(run_reference_cases(dir.path()).size() == 1);
  dir.write("a.yaml", good + ", colour: red}\n");
  CHECK_THROWS_WITH(run_reference_cases(dir.path()), Catch::Contains("colour"));
  dir.write("a.yaml", good + ", m: 0}\n");
  CHECK_THROWS_AS(run_reference_cases(dir.path()), dbosim::InputError);
  dir.write("a.yaml", "cases:\n  - {name: g, group: x, predictor: gemm, profile: h800, dtype: fp8, m: 64, n: 2112, "
                      "k: 7168, metric: tflops, measured: 206, tolerance_pct: 10, source: s}\n");
  CHECK_THROWS_WITH(run_reference_cases(dir.path()), Catch::Contains("tolerance_basis"));
  CHECK_THROWS_AS(run_reference_cases(dir.path() + "/absent"), dbosim::InputError);
}

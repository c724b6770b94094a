/* dbosim validate — the e2e group (validate/cases/e2e*.yaml: published deployment figures predicted by `dbosim run`
 * children): the shipped case files load, bad case files are located errors, the metrics are what a direct run
 * gives, the group is gated, and the uncertainty band printed by `dbosim run` and the plan report is that group's
 * recorded error. */
#include "RunShell.hpp"
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "validate/CaseResult.hpp"
#include "validate/E2eCases.hpp"
#include "validate/ErrorBand.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace dbosim::validate;
using dbosim::test::run_shell;
namespace fs = std::filesystem;

namespace {

const std::string src = DBOSIM_SOURCE_DIR;
const std::string bin = DBOSIM_BINARY;

/** A small step scenario (Qwen3-30B-A3B, one H200, 8 tokens): each run takes well under a second. */
const std::string small_scenario = "{model: qwen3-30b-a3b, hardware: h200, cluster: {nodes: 1, gpus_per_node: 8}, "
                                   "parallel: {dp: 8, ep: 8, tp: 1}, workload: {phase: decode, tokens_per_rank: 8, "
                                   "context_len: 1024}, overlap: {all2all_backend: deepep_low_latency}, seed: 1}";

std::string one_case(const std::string& fields, const std::string& metric = "step_ms")
{
  return "cases:\n  - {name: c, metric: " + metric +
         ", measured: 1, tolerance_pct: 10, tolerance_basis: b, source: s, scenario: " + small_scenario + fields +
         "}\n";
}

std::string read_file(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/** The value of `group,name` in a validate.csv: its predicted column. */
double predicted_in_csv(const std::string& csv, const std::string& name)
{
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("e2e," + name + ",", 0) == 0) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');)
        f.push_back(x);
      return std::stod(f.at(4));
    }
  FAIL("no row for " << name << " in\n" << csv);
  return 0;
}

} // namespace

TEST_CASE("validate e2e: the shipped case files load, with A6's four points, A7 and the async-combine A/B", "[quick]")
{
  const std::vector<std::string> names = check_e2e_cases(src + "/validate/cases");
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  for (const char* n : {"a6_tbo_decode_t32", "a6_tbo_decode_t64", "a6_tbo_decode_t128", "a6_tbo_decode_t256",
                        "a7_decode_ep144_tok_s", "a7_prefill_ep32_tok_s", "asyncc_itl_c1_off", "asyncc_itl_c1_on",
                        "asyncc_itl_c24_off", "asyncc_itl_c24_on", "asyncc_ratio_c1", "asyncc_ratio_c24"}) {
    INFO(n);
    CHECK(has(n));
  }
  CHECK(is_e2e_case_file("e2e_sglang_h100.yaml"));
  CHECK_FALSE(is_e2e_case_file("deepgemm.yaml"));
}

TEST_CASE("validate e2e: bad case files are located input errors", "[quick]")
{
  auto error_of = [](const std::string& text) {
    dbosim::test::TempDir dir;
    dir.write("e2e_bad.yaml", text);
    dir.write("deepgemm.yaml", "not: an e2e file, never read here\n");
    try {
      check_e2e_cases(dir.path());
    } catch (const dbosim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SECTION("unknown metric")
  {
    const std::string e = error_of(one_case("", "latency"));
    CHECK(e.find("e2e_bad.yaml:2:") != std::string::npos);
    CHECK(e.find("cases[0].metric") != std::string::npos);
    CHECK(e.find("step_ms, speedup, itl_p50_ms, itl_ratio, tok_s_per_node") != std::string::npos);
  }
  SECTION("a ratio without its two arms")
  {
    const std::string e = error_of(one_case(", base: {overlap.enable_dbo: false}", "speedup"));
    CHECK(e.find("cases[0].test") != std::string::npos);
  }
  SECTION("two arms on a one-scenario metric")
  {
    CHECK(error_of(one_case(", base: {seed: 2}")).find("cases[0].base") != std::string::npos);
  }
  SECTION("a scenario key that does not exist")
  {
    const std::string e = error_of(one_case(", set: {overlap.bogus: 1}"));
    CHECK(e.find("e2e_bad.yaml:2:") != std::string::npos);
    CHECK(e.find("cases[0].scenario") != std::string::npos);
    CHECK(e.find("bogus") != std::string::npos);
  }
  SECTION("a serving metric on a single-step scenario")
  {
    CHECK(error_of(one_case("", "itl_p50_ms")).find("needs a serving scenario") != std::string::npos);
  }
  SECTION("no tolerance basis")
  {
    std::string text = one_case("");
    text.replace(text.find("tolerance_basis: b, "), 20, "");
    CHECK(error_of(text).find("cases[0].tolerance_basis") != std::string::npos);
  }
  SECTION("an unknown schedule, a cache-hit fraction on a step metric, a duplicate name")
  {
    CHECK(error_of(one_case(", schedule: tbo")).find("deepseek_decode") != std::string::npos);
    CHECK(error_of(one_case(", cache_hit_fraction: 0.5")).find("cases[0].cache_hit_fraction") != std::string::npos);
    std::string two = one_case("");
    two += two.substr(two.find("  - {"));
    CHECK(error_of(two).find("cases[1].name") != std::string::npos);
  }
  SECTION("at the CLI: exit 2 with file:line")
  {
    dbosim::test::TempDir dir;
    dir.write("e2e_bad.yaml", one_case("", "latency"));
    int rc = 0;
    const std::string out =
        run_shell(bin + " validate --no-testbed --cases " + dir.path() + " --out " + dir.path() + "/out 2>&1", &rc);
    INFO(out);
    CHECK(rc == 2);
    CHECK(out.find("e2e_bad.yaml:2:") != std::string::npos);
  }
}

TEST_CASE("validate e2e: a dotted set: key through a plain value is exit 2 at the key (fuzz regression)", "[quick]")
{
  // fuzz/regressions/validate_e2e: the scenario's `workload` is a plain value, the case sets workload.tokens_per_rank.
  const std::string input = src + "/fuzz/regressions/validate_e2e/set_key_into_scalar_section.yaml";
  dbosim::test::TempDir dir;
  fs::copy_file(input, dir.path() + "/e2e_regression.yaml");
  int rc = 0;
  const std::string out =
      run_shell(bin + " validate --no-testbed --cases " + dir.path() + " --out " + dir.path() + "/out 2>&1", &rc);
  INFO(out);
  CHECK(rc == 2);
  CHECK(out.find("e2e_regression.yaml:13:") != std::string::npos); // the line of the set: key
  CHECK(out.find("cases[0].set.workload.tokens_per_rank: 'workload' holds the value '128'") != std::string::npos);
  CHECK(out.find("a dotted key cannot descend into it") != std::string::npos);
  CHECK(out.find("BadSubscript") == std::string::npos);
}

TEST_CASE("validate e2e: predictions are what `dbosim run` gives, and the group is gated", "[quick]")
{
  dbosim::test::TempDir dir;
  // step_ms of the small scenario; a speedup whose arms differ only in DBO; a speedup of two identical arms (= 1
  // exactly: both read the one run the memo keeps); tok/s per node = 8 tokens x 8 GPUs / step, over (1 - 0.5).
  dbosim::test::TempDir cases; // only the case file: --cases reads every *.yaml there
  cases.write("e2e_small.yaml",
              "defaults: {tolerance_pct: 50, tolerance_basis: b, source: s, scenario: " + small_scenario +
                  "}\n"
                  "cases:\n"
                  "  - {name: step, metric: step_ms, measured: 1}\n"
                  "  - {name: same, metric: speedup, measured: 1, base: {seed: 1}, test: {seed: 1}}\n"
                  "  - {name: cached, metric: tok_s_per_node, cache_hit_fraction: 0.5, measured: 1000}\n");
  int rc                 = 0;
  const std::string vdir = dir.path() + "/v";
  std::string out        = run_shell(bin + " validate --no-testbed --cases " + cases.path() + " --out " + vdir +
                                         " --write-baseline " + dir.path() + "/b.yaml 2>&1",
                                     &rc);
  INFO(out);
  REQUIRE((rc == 0 || rc == 3));
  CHECK(out.find("e2e ") != std::string::npos);
  const std::string csv = read_file(vdir + "/validate.csv");
  const double step_ms  = predicted_in_csv(csv, "step");

  // The same scenario through `dbosim run` directly.
  const std::string direct = run_shell(
      bin + " run " + vdir + "/e2e/step/run/scenario.yaml --out " + dir.path() + "/direct > /dev/null 2>&1", &rc);
  REQUIRE(rc == 0);
  const auto summary = nlohmann::json::parse(read_file(dir.path() + "/direct/summary.json"));
  CHECK(step_ms == Approx(summary["step_time_us"].get<double>() / 1000).epsilon(1e-5));
  CHECK(predicted_in_csv(csv, "same") == Approx(1.0).epsilon(1e-12));
  CHECK(predicted_in_csv(csv, "cached") == Approx(8 * 8 / (step_ms / 1000) / 0.5).epsilon(1e-5));

  // The recorded baseline lists the e2e cases; a baseline below the group's error fails the gate (exit 4).
  const Baseline b = load_baseline_file(dir.path() + "/b.yaml");
  CHECK(b.cases.at("e2e") == std::vector<std::string>{"step", "same", "cached"});
  const std::string tight = dir.write("tight.yaml", "groups:\n  e2e: 0\n");
  out = run_shell(bin + " validate --no-testbed --cases " + cases.path() + " --out " + vdir + " --baseline " + tight +
                      " 2>&1",
                  &rc);
  CHECK(rc == 4);
  CHECK(out.find("gate: group e2e:") != std::string::npos);
  CHECK(out.find("e2e hopper") != std::string::npos); // the MAPE of the cases' GPU generation (h200), not gated

  // A baseline whose e2e list holds none of these cases gates none of them (each is reported as new), however tight.
  const std::string other = dir.write("other.yaml", "groups:\n  e2e: 0\ncases:\n  e2e: [recorded_elsewhere]\n");
  out = run_shell(bin + " validate --no-testbed --cases " + cases.path() + " --out " + vdir + " --baseline " + other +
                      " 2>&1",
                  &rc);
  CHECK((rc == 0 || rc == 3));
  CHECK(out.find("gate: 3 case(s) not in the baseline's case list, reported and not gated until it is re-recorded: "
                 "step, same, cached") != std::string::npos);
  CHECK(out.find("gate: ok") != std::string::npos);
}

TEST_CASE("validate e2e: the uncertainty band is the e2e group's recorded error and names its cases", "[quick]")
{
  dbosim::test::TempDir dir;
  CHECK_FALSE(load_error_band(dir.path() + "/none.yaml"));
  CHECK_FALSE(load_error_band(dir.write("no_e2e.yaml", "groups:\n  testbed_makespan/dbo: 8.86\n")));
  CHECK(band_text(std::nullopt, "x.yaml").find("not measured") != std::string::npos);
  const std::string f =
      dir.write("b.yaml", "groups:\n  e2e: 23.46\n  testbed_makespan/dbo: 8.86\ncases:\n  e2e: [a6_x, a7_y]\n");
  const auto band = load_error_band(f);
  REQUIRE(band);
  CHECK(band->mape_pct == Approx(23.46));
  CHECK(band->cases == std::vector<std::string>{"a6_x", "a7_y"});
  CHECK(band_text(band, f) == "band ±23.5% from validate e2e group (2 cases: a6_x, a7_y) in " + f);
  CHECK_THROWS_AS(load_error_band(dir.write("bad.yaml", "groups:\n  e2e: 1\ncases:\n  e2e: 3\n")), dbosim::InputError);
}

TEST_CASE("validate e2e: a GPU generation with 3 recorded cases has its own band, fewer fall back to the group's",
          "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string f = dir.write("b.yaml", "groups:\n  e2e: 30\ncases:\n  e2e: [h1, h2, h3, b1, b2]\n"
                                            "generations:\n  e2e:\n    hopper: {mape_pct: 10, cases: [h1, h2, h3]}\n"
                                            "    blackwell: {mape_pct: 60, cases: [b1, b2]}\n");
  const auto hopper   = load_error_band(f, "hopper");
  REQUIRE(hopper);
  CHECK(hopper->mape_pct == Approx(10));
  CHECK(hopper->generation == "hopper");
  CHECK(hopper->note.empty());
  CHECK(band_text(hopper, f) == "band ±10.0% from validate e2e group, its hopper cases (3 cases: h1, h2, h3) in " + f);
  const auto blackwell = load_error_band(f, "blackwell"); // 2 cases: the group's band, saying why
  REQUIRE(blackwell);
  CHECK(blackwell->mape_pct == Approx(30));
  CHECK(blackwell->generation.empty());
  CHECK(blackwell->cases.size() == 5);
  CHECK(band_text(blackwell, f).find("(2 blackwell case(s) recorded, fewer than 3: every case's band)") !=
        std::string::npos);
  const auto cdna = load_error_band(f, "cdna");
  REQUIRE(cdna);
  CHECK(cdna->mape_pct == Approx(30));
  CHECK(cdna->note == "no cdna cases recorded: every case's band");
  const auto all = load_error_band(f); // no generation asked: the group's, no note
  REQUIRE(all);
  CHECK(all->mape_pct == Approx(30));
  CHECK(all->note.empty());
}

TEST_CASE("validate e2e: `dbosim run` prints the band of its GPU's generation when the baseline records one", "[quick]")
{
  // The shipped profiles name their generation; the band line follows it (or says why it is every case's).
  const YAML::Node b = YAML::LoadFile(src + "/validate/baseline.yaml");
  dbosim::test::TempDir dir;
  int rc                = 0;
  const std::string out = run_shell(bin + " run " + src + "/scenarios/default.yaml --out " + dir.path() + " 2>&1", &rc);
  INFO(out);
  REQUIRE(rc == 0);
  if (b["generations"] && b["generations"]["e2e"] && b["generations"]["e2e"]["hopper"] &&
      b["generations"]["e2e"]["hopper"]["cases"].size() >= min_generation_cases)
    CHECK(out.find("from validate e2e group, its hopper cases (") != std::string::npos);
  else
    CHECK(out.find("hopper case") != std::string::npos); // the note: none or too few recorded
}

TEST_CASE("validate e2e: `dbosim run` prints the shipped baseline's e2e band under the step time", "[quick]")
{
  // The default scenario runs on the H200: the band of the Hopper cases when the baseline records 3 or more of them,
  // else the whole group's.
  const YAML::Node b = YAML::LoadFile(src + "/validate/baseline.yaml");
  REQUIRE(b["groups"]["e2e"]);
  const YAML::Node hopper = b["generations"]["e2e"]["hopper"];
  const bool own          = hopper && hopper["cases"].size() >= 3;
  const double mape       = own ? hopper["mape_pct"].as<double>() : b["groups"]["e2e"].as<double>();
  const std::size_t cases = own ? hopper["cases"].size() : b["cases"]["e2e"].size();
  dbosim::test::TempDir dir;
  int rc                = 0;
  const std::string out = run_shell(bin + " run " + src + "/scenarios/default.yaml --out " + dir.path() + " 2>&1", &rc);
  INFO(out);
  REQUIRE(rc == 0);
  const std::size_t step = out.find("step time");
  const std::size_t band = out.find(
      fmt::format("band ±{:.1f}% from validate e2e group{} ({} cases: ", mape, own ? ", its hopper cases" : "", cases));
  REQUIRE(step != std::string::npos);
  REQUIRE(band != std::string::npos);
  CHECK(out.find('\n', step) + 3 == band); // the next line, indented by two
}

TEST_CASE("validate e2e: the shipped group holds its recorded MAPE (every case a `dbosim run` child)", "[slow]")
{
  dbosim::test::TempDir dir;
  int rc                = 0;
  const std::string out = run_shell(
      bin + " validate --no-testbed --out " + dir.path() + " --baseline " + src + "/validate/baseline.yaml 2>&1", &rc);
  INFO(out);
  CHECK((rc == 0 || rc == 3)); // 3: cases outside their tolerance, recorded in the baseline
  CHECK(out.find("gate: ok") != std::string::npos);
  for (const std::string& n : check_e2e_cases(src + "/validate/cases")) {
    INFO(n);
    CHECK((out.find(fmt::format("{:<38} {}", "e2e", n)) != std::string::npos ||
           out.find(fmt::format("{:<38} {}", "e2e_dev", n)) != std::string::npos));
  }
}

/* dbosim validate --bench-result: a serving benchmark's result file (vLLM, SGLang) read strictly, its settings merged
 * into the scenario, and predicted vs measured printed and written. The bench files are synthetic
 * (tests/data/bench_result/README.md); the scenario is the cheapest shipped serving one (4 requests, one at a time). */
#include "RunShell.hpp"
#include "TempDir.hpp"

#include "base/InputError.hpp"
#include "validate/BenchResult.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <string>

namespace {

using dbosim::test::run_shell;
using dbosim::test::TempDir;
using namespace dbosim::validate;

const std::string kSrc      = DBOSIM_SOURCE_DIR;
const std::string kData     = kSrc + "/tests/data/bench_result/";
const std::string kVllm     = kData + "vllm_dsr1_gb300_c1.json";
const std::string kSglang   = kData + "sglang_dsr1_gb300.jsonl";
const std::string kScenario = kSrc + "/scenarios/dsv3_serving_ep8_gb300_async_combine.yaml";

std::string slurp(const std::string& path)
{
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(slurp(path)); }

/** `text` with the first `from` replaced by `to` (which must be there). */
std::string replaced(std::string text, const std::string& from, const std::string& to)
{
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

const LatencyStat* stat_of(const BenchResult& b, LatencyMetric m, const std::string& stat)
{
  for (const LatencyStat& s : b.latencies)
    if (s.metric == m && s.stat == stat)
      return &s;
  return nullptr;
}

/** `dbosim validate --bench-result FILE --scenario S --out OUT [extra]`, stdout and stderr together. */
std::string validate_bench(const std::string& file, const std::string& scenario, const std::string& out, int* rc,
                           const std::string& extra = "")
{
  return run_shell(std::string(DBOSIM_BINARY) + " validate --bench-result " + file + " --scenario " + scenario +
                       " --out " + out + " " + extra + " 2>&1",
                   rc);
}

/** The row of `metric` in the printed table: predicted, measured, error %. */
struct Row {
  double predicted = 0, measured = 0, error_pct = 0;
};
Row row_of(const nlohmann::json& result, const std::string& metric)
{
  for (const auto& r : result["rows"])
    if (r["metric"] == metric)
      return {r["predicted"].get<double>(), r["measured"].get<double>(), r["error_pct"].get<double>()};
  FAIL("no row " << metric);
  return {};
}

} // namespace

TEST_CASE("validate::load_bench_result: a vllm bench serve result with every field typed", "[quick]")
{
  const BenchResult b = load_bench_result(kVllm);
  CHECK(b.format == BenchFormat::vllm);
  CHECK_FALSE(b.format_given);
  CHECK(b.line == 1);
  CHECK(b.duration_s == Approx(15.104));
  CHECK(b.completed == 4);
  CHECK(b.failed == 0);
  CHECK(b.total_input_tokens == 4096);
  CHECK(b.total_output_tokens == 1024);
  CHECK(b.request_throughput == Approx(0.26483));
  CHECK(b.output_throughput == Approx(67.796));
  REQUIRE(b.total_token_throughput);
  CHECK(*b.total_token_throughput == Approx(338.98));
  // TTFT, TPOT, ITL: mean, median, p90, p99 (--metric-percentiles 90,99); std is read and checked, not compared
  CHECK(b.latencies.size() == 12);
  REQUIRE(stat_of(b, LatencyMetric::itl, "p90") != nullptr);
  CHECK(stat_of(b, LatencyMetric::itl, "p90")->percentile == 90);
  CHECK(stat_of(b, LatencyMetric::itl, "p90")->ms == Approx(15.21));
  CHECK(stat_of(b, LatencyMetric::ttft, "median")->percentile == 50);
  CHECK(stat_of(b, LatencyMetric::tpot, "mean")->percentile == -1);
  CHECK(stat_of(b, LatencyMetric::e2el, "mean") == nullptr); // vLLM's default --percentile-metrics leaves E2EL out
  CHECK(b.num_prompts.value == 4);
  CHECK(b.max_concurrency.value == 1);
  CHECK(b.request_rate.value == 0.0); // "inf": unbounded
  CHECK(b.burstiness.value == 1.0);
  CHECK(b.notes.empty());
}

TEST_CASE("validate::load_bench_result: SGLang's JSON lines (the last line unless told)", "[quick]")
{
  const BenchResult last = load_bench_result(kSglang);
  CHECK(last.format == BenchFormat::sglang);
  CHECK(last.line == 2);
  CHECK(last.max_concurrency.value == 1);
  CHECK(last.request_rate.value == 0.0); // Python's bare Infinity
  CHECK_FALSE(last.burstiness.value);
  CHECK(last.num_prompts.value == 8); // SGLang writes none: its completed requests
  CHECK(last.num_prompts.key == "completed");
  REQUIRE(stat_of(last, LatencyMetric::itl, "p95") != nullptr);
  CHECK(stat_of(last, LatencyMetric::itl, "p95")->ms == Approx(15.59));
  CHECK(stat_of(last, LatencyMetric::e2el, "p99")->key == "p99_e2e_latency_ms");
  REQUIRE(last.total_token_throughput);
  CHECK(*last.total_token_throughput == Approx(336.377));

  const BenchResult first = load_bench_result(kSglang, std::nullopt, 1);
  CHECK(first.line == 1);
  CHECK(first.max_concurrency.value == 2);
  CHECK(stat_of(first, LatencyMetric::ttft, "mean")->ms == Approx(61.3));

  // a format given overrides the fields: the SGLang line read as vLLM's has no e2el keys and no num_prompts
  const BenchResult as_vllm = load_bench_result(kSglang, BenchFormat::vllm);
  CHECK(as_vllm.format_given);
  CHECK(stat_of(as_vllm, LatencyMetric::e2el, "mean") == nullptr);
  CHECK_THROWS_WITH(load_bench_result(kSglang, std::nullopt, 3),
                    kSglang + ": --bench-line: line 3 holds no result (valid: a line where a result starts: 1, 2)");
}

TEST_CASE("dbosim validate --bench-result: each defect of a bench file exits 2 naming where it is and what is valid",
          "[quick]")
{
  TempDir dir;
  const std::string v = slurp(kVllm);
  struct Case {
    const char* name;
    std::string text;
    std::string message; ///< after "dbosim: error: <file>"
  };
  const std::string vllm_valid = " (valid: the JSON of `vllm bench serve --save-result`, or the JSON lines of "
                                 "`python -m sglang.bench_serving --output-file`)";
  const Case cases[]           = {
                {"missing", replaced(v, "\"request_throughput\": 0.26483, ", ""),
                 ":1:1: request_throughput: missing (vllm bench serve writes it) (valid: a finite number >= 0 (req/s))"},
                {"wrong_type", replaced(v, "\"completed\": 4", "\"completed\": \"4\""),
                 ":1:" + std::to_string(v.find("\"completed\"") + 1) +
                     ": completed: expected an integer, got \"4\" (valid: an integer >= 1 (requests that finished))"},
                {"negative", replaced(v, "\"mean_ttft_ms\": 52.41", "\"mean_ttft_ms\": -3.5"),
                 ":1:" + std::to_string(v.find("\"mean_ttft_ms\"") + 1) +
                     ": mean_ttft_ms: -3.5 is negative (valid: a finite number >= 0 (ms))"},
                {"nan", replaced(v, "\"mean_itl_ms\": 14.604", "\"mean_itl_ms\": NaN"),
                 ":1:" + std::to_string(v.find("\"mean_itl_ms\"") + 1) +
                     ": mean_itl_ms: NaN is not a number (valid: a finite number >= 0 (ms))"},
                {"empty", "\n \n", ": empty file: no JSON object" + vllm_valid},
                {"duplicate", replaced(v, "\"p99_itl_ms\": 17.93", "\"p99_itl_ms\": 17.93, \"p99_itl_ms\": 1.0"),
                 ":1:" + std::to_string(v.find("\"p99_itl_ms\"") + 22) +
                     ": p99_itl_ms: duplicate key (JSON keeps one value per key) (valid: each key once per object)"},
                {"not_json_line", v + "\n" + v.substr(0, 40) + "\n",
                 ":2:41: not valid JSON: syntax error while parsing value - invalid string: missing closing quote; last "
                           "read: '\"'" +
                     vllm_valid},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name)
    {
      const std::string file = dir.write(std::string(c.name) + ".json", c.text);
      int rc                 = 0;
      const std::string out  = validate_bench(file, kScenario, dir.path() + "/out", &rc);
      CHECK(rc == 2);
      CHECK(out == "dbosim: error: " + file + c.message + "\n");
      CHECK_FALSE(std::ifstream(dir.path() + "/out/summary.json").good()); // rejected before anything ran
    }
  }
}

TEST_CASE("dbosim validate --bench-result: predicted vs measured on the GB300 serving scenario (vLLM result)",
          "[quick]")
{
  TempDir dir;
  int rc                = 0;
  const std::string out = validate_bench(kVllm, kScenario, dir.path(), &rc);
  REQUIRE(rc == 0);
  // which setting came from which side: the scenario states num_prompts and max_concurrency (as the file does)
  CHECK(out.find("num_prompts             4  the scenario and the bench file (num_prompts) agree") !=
        std::string::npos);
  CHECK(out.find("request_rate          inf  from the bench file (request_rate); the scenario states none") !=
        std::string::npos);
  CHECK(out.find("warning:") == std::string::npos);
  for (const char* metric : {"TTFT mean", "TTFT median", "TTFT p90", "TTFT p99", "TPOT p99", "ITL p90", "ITL p99",
                             "request throughput", "output throughput", "total throughput"})
    CHECK(out.find(metric) != std::string::npos);
  CHECK(out.find("E2EL") == std::string::npos);             // the file has no E2EL figure: no row
  CHECK(out.find("mean concurrency") == std::string::npos); // vLLM writes none

  // the predictions are the serving run's own figures (summary.json), the measurements the file's
  const nlohmann::json summary = read_json(dir.path() + "/summary.json")["serving"];
  const nlohmann::json result  = read_json(dir.path() + "/bench_result.json");
  CHECK(result["bench_result"]["format"] == "vllm");
  CHECK(result["rows"].size() == 15);
  CHECK(row_of(result, "TTFT mean").predicted == Approx(summary["mean_ttft_ms"].get<double>()));
  CHECK(row_of(result, "ITL p99").predicted == Approx(summary["p99_itl_ms"].get<double>()));
  CHECK(row_of(result, "TPOT p90").predicted == Approx(summary["p90_tpot_ms"].get<double>()));
  CHECK(row_of(result, "output throughput").predicted == Approx(summary["output_throughput"].get<double>()));
  const Row ttft = row_of(result, "TTFT p99");
  CHECK(ttft.measured == Approx(54.19));
  CHECK(ttft.error_pct == Approx(100 * (ttft.predicted - 54.19) / 54.19));
  CHECK(summary["completed"] == 4);
  CHECK(result["settings"][2]["key"] == "request_rate");
  CHECK(result["settings"][2]["from"] == "bench");
  CHECK(result["settings"][2]["used"] == 0);
  const std::string csv = slurp(dir.path() + "/validate.csv");
  CHECK(csv.find("bench_serving,vllm_dsr1_gb300_c1,\"TTFT p99\",ms,") != std::string::npos);
}

TEST_CASE("dbosim validate --bench-result: a setting both sides state differently is warned about with both values "
          "(SGLang result)",
          "[quick]")
{
  TempDir dir;
  int rc                = 0;
  const std::string out = validate_bench(kSglang, kScenario, dir.path(), &rc);
  REQUIRE(rc == 0);
  CHECK(out.find("(sglang, told from its fields; the result on line 2)") != std::string::npos);
  CHECK(out.find("warning: num_prompts: the scenario says 4, the bench file says 8 (completed, line 2); simulating "
                 "the bench file's 8, the measured run's") != std::string::npos);
  CHECK(out.find("burstiness              1  the scenario's default; neither states it") != std::string::npos);
  const nlohmann::json summary = read_json(dir.path() + "/summary.json")["serving"];
  CHECK(summary["completed"] == 8); // the bench file's 8 requests were simulated
  const nlohmann::json result = read_json(dir.path() + "/bench_result.json");
  CHECK(result["warnings"].size() == 1);
  // a percentile only the bench file names (p95) is taken of the simulated ITLs: between their p90 and p99
  const double p95 = row_of(result, "ITL p95").predicted;
  CHECK(p95 >= summary["p90_itl_ms"].get<double>());
  CHECK(p95 <= summary["p99_itl_ms"].get<double>());
  CHECK(row_of(result, "E2EL mean").predicted == Approx(summary["mean_e2el_ms"].get<double>()));
  // SGLang's mean concurrency (E2E latencies summed over the duration) is the run's mean requests in the system
  CHECK(row_of(result, "mean concurrency").predicted == Approx(summary["mean_requests_in_system"].get<double>()));
  CHECK(row_of(result, "mean concurrency").measured == Approx(0.99));

  // --bench-line 1: the earlier run at concurrency 2 differs from the scenario's 1 as well
  const std::string first = validate_bench(kSglang, kScenario, dir.path() + "/first", &rc, "--bench-line 1");
  REQUIRE(rc == 0);
  CHECK(first.find("warning: max_concurrency: the scenario says 1, the bench file says 2 (max_concurrency, line 1)") !=
        std::string::npos);
}

TEST_CASE("dbosim validate --bench-result: a scenario stating no run settings takes the bench file's", "[quick]")
{
  TempDir dir;
  std::string yaml           = slurp(kScenario);
  yaml                       = replaced(yaml, "num_prompts: 4, max_concurrency: 1, ", ""); // now a single-step scenario
  const std::string scenario = dir.write("no_settings.yaml", yaml);
  int rc                     = 0;
  const std::string out      = validate_bench(kVllm, scenario, dir.path() + "/out", &rc);
  REQUIRE(rc == 0);
  CHECK(out.find("num_prompts             4  from the bench file (num_prompts); the scenario states none") !=
        std::string::npos);
  CHECK(out.find("max_concurrency         1  from the bench file (max_concurrency); the scenario states none") !=
        std::string::npos);
  const nlohmann::json summary = read_json(dir.path() + "/out/summary.json");
  CHECK(summary["scenario"] == "no_settings");
  CHECK(summary["serving"]["completed"] == 4);
  CHECK(summary["serving"]["max_concurrency"] == 1);
}

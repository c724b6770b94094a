/* dbosim validate — a serving benchmark's result file, read strictly into typed figures: the JSON `vllm bench serve
 * --save-result` writes (one object; one per line with --append-result) and the JSON lines `python -m
 * sglang.bench_serving --output-file` appends (one object per run). Field names as the engines write them, read in:
 *   vllm-project/vllm vllm/benchmarks/serve.py at def9ce85ba10: `benchmark` (the result dict and
 *     `process_one_metric`: mean_/median_/std_/pNN_{ttft,tpot,itl,e2el}_ms, NN as `--metric-percentiles` gives it,
 *     "99" or "99.9") and `main_async` (num_prompts, request_rate, the string "inf" when unbounded, burstiness,
 *     max_concurrency, null when unbounded, ramp_up_strategy);
 *   python/sglang/bench_serving.py of SGLang, in a fork of sgl-project/sglang (fzyzcjy/sglang at 0c69f5baf703):
 *     `calculate_metrics` and `benchmark` (the JSON line: mean_/median_/std_/p99_{ttft,tpot}_ms, p95_/p99_itl_ms,
 *     {mean,median,std,p99}_e2e_latency_ms, request_throughput, input_throughput, total_throughput, max_concurrency,
 *     null when unbounded, request_rate, "trace" when replaying trace timestamps, concurrency: the summed E2E latencies
 * over the duration; no num_prompts). Python's json writes float('inf') as the bare word Infinity (SGLang's default
 * request rate): read as unbounded. The upstream file at 50a613687fe1 (sgl-project/sglang) wrote fewer fields (no
 * request_throughput, no mean TTFT): such a line is rejected for its first missing field. Times are in ms, throughputs
 * per second, as in the files. */
#pragma once
#include "validate/JsonRecords.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dbosim::validate {

enum class BenchFormat { vllm, sglang };

/** @brief "vllm" or "sglang". */
const char* bench_format_name(BenchFormat f);
/** @brief The format named by `--bench-format`. @throws InputError listing the names. */
BenchFormat bench_format_from_name(const std::string& name);

enum class LatencyMetric { ttft, tpot, itl, e2el };

/** @brief "TTFT", "TPOT", "ITL", "E2EL". */
const char* latency_metric_label(LatencyMetric m);

/** @brief One latency statistic of the file: a mean, a median or a percentile of one metric. */
struct LatencyStat {
  LatencyMetric metric = LatencyMetric::ttft;
  std::string stat;       ///< "mean", "median", or "p99", "p99.9" (the percentile as the file spells it)
  double percentile = -1; ///< 50 for the median, NN for pNN, -1 for the mean
  double ms         = 0;
  std::string key; ///< the file's key ("p99_ttft_ms")
};

/** @brief A run setting the file states (`value` empty: the file does not state it). */
template <class T> struct BenchSetting {
  std::optional<T> value;
  std::string key; ///< the file's key, or how the value was derived
  FieldAt at;
};

struct BenchResult {
  std::string file;
  int line = 0; ///< the record's first line
  BenchFormat format;
  bool format_given = false; ///< by --bench-format (else told from the fields)
  double duration_s = 0;
  long completed    = 0;
  std::optional<long> failed;
  long total_input_tokens   = 0;
  long total_output_tokens  = 0;
  double request_throughput = 0;                ///< req/s
  double output_throughput  = 0;                ///< tok/s
  std::optional<double> total_token_throughput; ///< tok/s (vLLM total_token_throughput, SGLang total_throughput)
  std::optional<double> concurrency;  ///< SGLang's mean requests in flight: the requests' E2E latencies / duration
  std::vector<LatencyStat> latencies; ///< every mean, median and percentile, by metric then statistic
  BenchSetting<long> num_prompts;     ///< SGLang writes none: completed (+ failed) stands for it
  BenchSetting<long> max_concurrency; ///< 0: unbounded (the file's null)
  BenchSetting<double> request_rate;  ///< req/s; 0: unbounded (vLLM "inf", Python's Infinity)
  BenchSetting<double> burstiness;    ///< gamma shape of the arrivals (vLLM)
  std::vector<std::string> notes;     ///< what the file says that the simulation does not reproduce
};

/** @brief Reads `path`. `format`: as given by --bench-format, else told from the fields. `line`: the physical line of
 *  the record in a JSON-lines file, 0 for the last. @throws InputError (file:line:col: key: problem (valid: ...)) on
 *  an empty file, text that is not JSON, a key given twice, a missing field, a value of the wrong type, negative,
 *  NaN or infinite. */
BenchResult load_bench_result(const std::string& path, std::optional<BenchFormat> format = std::nullopt, int line = 0);

} // namespace dbosim::validate

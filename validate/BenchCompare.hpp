/* dbosim validate — a measured serving benchmark against dbosim's serving simulation of it. One row per statistic the
 * bench file holds: TTFT, TPOT, ITL and end-to-end latency, each mean, median and percentile it gives (the prediction
 * takes the same statistic of the simulated requests: numpy's linear percentile, as vLLM and SGLang take theirs), and
 * the request, output and total token throughputs, and SGLang's mean concurrency. Rows are reported (group
 * bench_serving), not checked. */
#pragma once
#include "serving/ServingMetrics.hpp"
#include "validate/BenchResult.hpp"
#include "validate/BenchScenario.hpp"
#include "validate/CaseResult.hpp"

#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief Requests and mean lengths of a run (tokens per request). */
struct BenchWorkload {
  long requests             = 0;
  double input_per_request  = 0;
  double output_per_request = 0;
};

struct BenchComparison {
  std::vector<CaseResult> rows;      ///< group "bench_serving", case: the bench file's stem
  std::vector<std::string> skipped;  ///< statistics the file gives as 0 (no samples, e.g. TPOT of 1-token outputs)
  BenchWorkload measured, predicted; ///< what was sent: the lengths should match for the comparison to mean much
  std::vector<std::string> warnings; ///< mean lengths more than `length_warning_pct` apart
};

/** @brief Mean prompt or output lengths further apart than this (%) are warned about: the runs served different
 *  requests. A display threshold, not a model figure. */
inline constexpr double length_warning_pct = 5;

/** @brief Compares `measured` with the simulated run's samples. */
BenchComparison compare_bench(const BenchResult& measured, const serving::ServingSamples& predicted);

/** @brief The printed report after the settings: the workload line, warnings, skipped statistics and the table. */
std::string comparison_text(const BenchComparison& c);

/** @brief OUT/bench_result.json: the bench file, the scenario, the settings and where each came from, the warnings,
 *  the workload and every row (predicted, measured, error %). */
std::string bench_json(const BenchResult& measured, const BenchScenario& scenario, const BenchComparison& c);

} // namespace dbosim::validate

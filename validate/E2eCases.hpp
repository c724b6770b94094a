/* dbosim validate — end-to-end cases: published deployment figures (validate/cases/e2e*.yaml), each predicted by
 * running the scenario it describes through `dbosim run` in a child process, as a user would:
 *   metric step_ms         the step time of a single-step scenario (ms);
 *   metric speedup         t(base) / t(test) of two single-step scenarios (x): an overlap gain is speedup - 1;
 *   metric itl_p50_ms      the median inter-token latency of a serving scenario (ms);
 *   metric itl_ratio       ITL p50 (test) / ITL p50 (base) of two serving scenarios (x): an A/B change is ratio - 1;
 *   metric tok_s_per_node  tokens per second per node: a serving scenario's output throughput per GPU x GPUs per
 *                          node, or a single step's tokens per rank x GPUs per node / step time, divided by
 *                          (1 - cache_hit_fraction) when the source counts cached prompt tokens too.
 * A case is {name, metric, scenario (a scenario mapping), set/base/test (dotted scenario keys: the case's, and each
 * arm's, values), measured, tolerance_pct, tolerance_basis, source}; optional schedule (`dbosim run --schedule`),
 * cache_hit_fraction, mtp (the source's MTP setting, recorded while the prediction runs without it), what, note.
 * Ratios are compared as ratios, so a case's error % is the gain's error in points divided by the measured ratio. */
#pragma once
#include "validate/CaseResult.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace dbosim::validate {

struct E2eOptions {
  std::string cases_dir; ///< reads cases_dir/e2e*.yaml (sorted by name, cases in file order)
  std::string dbosim;    ///< the program each scenario runs with (`dbosim run`)
  std::string work_dir;  ///< each arm's scenario.yaml, summary.json and log.txt go to work_dir/<case>/<arm>/
  std::function<void(std::size_t done, std::size_t total)> on_progress; ///< after each case (may be empty)
};

/** @brief True for a file name the e2e group owns (e2e*.yaml); the reference cases skip these files. */
bool is_e2e_case_file(const std::string& filename);

/** @brief Checks every e2e case file (keys, ranges, each arm's scenario loads) without simulating anything; returns
 *  the case names in run order. @throws InputError naming the case file, line and key. */
std::vector<std::string> check_e2e_cases(const std::string& cases_dir);

/** @brief Predicts every e2e case (sequentially, one `dbosim run` per arm). @throws InputError on a bad case file,
 *  InternalError when a child run fails. */
std::vector<CaseResult> run_e2e_cases(const E2eOptions& opt);

} // namespace dbosim::validate

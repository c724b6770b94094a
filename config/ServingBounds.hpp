/* dbosim — the bounds a serving run is held to before it starts: the steps it must take at the fewest, from its
 * requests' output tokens and how many of them can run at once. */
#pragma once

#include "config/Scenario.hpp"

#include <optional>
#include <string>

namespace dbosim {

/** Most steps one serving run may take: each is scheduled, priced and written as a steps.csv row (measured: 200,180
 *  steps of an EP8 run took 11 s of CPU and wrote 24 MB, ~0.06 ms and ~120 bytes a step; docs/model.md). */
inline constexpr double max_serving_steps = 1048576.0;

/** @brief Requests that can run in one step at most: the client's max_concurrency (0: every request), and each DP
 *  rank's scheduler.max_num_seqs. */
double serving_running_cap(const Scenario& s, double requests);

/** @brief The fewest steps a serving run can take: each running request gets at most 1 + k tokens a step (k drafts
 *  under speculative decoding), so `output_tokens` over the running cap, and no fewer than its longest request. */
double min_serving_steps(const Scenario& s, double requests, double output_tokens, double longest_output);

/** @brief Why a serving run of these requests would pass max_serving_steps (its message and the valid range), or
 *  nothing when it fits. */
struct StepBoundProblem {
  std::string message;
  std::string valid;
};
std::optional<StepBoundProblem> serving_steps_problem(const Scenario& s, double requests, double output_tokens,
                                                      double longest_output);

} // namespace dbosim

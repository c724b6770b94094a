/* dbosim-calibrate diff — the step time of single-step scenarios under two hardware profiles.
 *
 * Each scenario is loaded as shipped, then simulated with its `hardware` replaced by profile A, then by profile B;
 * everything else stays. Its network facts (hwprofiles/network/) are what the scenario loader would pick with that
 * hardware: cluster.network when the scenario sets it, else the facts named after the profile (a link's achievable
 * rate must stay under the profile's raw rate, so facts cannot be kept across GPUs). The step time is the one
 * `dbosim run` reports: the single-rank engine when routing is balanced (serving/EngineOracle, a forked child per
 * step: SimGrid runs one simulation per process), every rank (sim/engine/ClusterRun, also in a child) when the routing
 * is drawn; under speculative decoding the draft's passes are added, as the serving step-time oracle counts a step.
 * Serving runs (workload.num_prompts or a trace: many steps) are listed as skipped. */
#pragma once
#include "hw/HwProfile.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::calib {

struct StepDiff {
  std::string scenario; ///< the scenario's name
  std::string file;     ///< the file it came from
  std::string engine;   ///< "one rank" or "every rank"
  double step_a_us = 0; ///< under profile A
  double step_b_us = 0; ///< under profile B
  double ratio     = 0; ///< step_b_us / step_a_us; 0 when not both ran
  std::string skipped;  ///< why it was not simulated (a serving run) or ran under neither profile; empty when it ran
  std::string failed;   ///< the error under A or B (an input the other profile accepts, e.g. too few SMs)
};

/** @brief The shipped scenarios: the .yaml files in data_dir()/scenarios, sorted by name. */
std::vector<std::string> shipped_scenarios();

/** @brief Each scenario file's step under `a` and under `b`, in the order given.
 *  @throws InputError when a scenario file does not load. */
std::vector<StepDiff> diff_steps(const models::HwProfile& a, const models::HwProfile& b,
                                 const std::vector<std::string>& scenario_files);

/** @brief The largest max(ratio, 1 / ratio) over the scenarios that ran under both (1 when none did). */
double worst_step_ratio(const std::vector<StepDiff>& steps);

/** @brief Scenarios that ran under one profile and failed under the other. */
int failed_steps(const std::vector<StepDiff>& steps);

std::string step_diff_text(const std::vector<StepDiff>& steps);

nlohmann::ordered_json step_diff_json(const std::vector<StepDiff>& steps);

} // namespace dbosim::calib

/* dbosim-calibrate diff A.yaml B.yaml — two hardware profiles compared family by family (calibrate/ProfileDiff),
 * then the step time of the single-step scenarios under each (calibrate/StepDiff); a readable report, a JSON
 * document, and an optional gate on the step ratios (a new calibration of "the same GPU" should move no step by
 * more than X). */
#pragma once
#include "calibrate/ProfileDiff.hpp"
#include "calibrate/StepDiff.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::calib {

struct DiffOptions {
  std::string profile_a;              ///< a profile name (hwprofiles/<name>.yaml) or a path
  std::string profile_b;              ///< likewise
  std::vector<std::string> scenarios; ///< scenario names or paths; empty: every shipped scenario
  bool steps            = true;       ///< false: the profile families only
  double max_step_ratio = 0;          ///< > 0: the gate, max(B/A, A/B) of every step at most this
};

struct DiffReport {
  std::vector<FamilyDiff> families;
  std::vector<StepDiff> steps;
  std::string text;            ///< the readable report
  nlohmann::ordered_json json; ///< the same, for machines
  int exit_code = 0;           ///< 1 when the gate is set and a step moved by more than it (or ran under one only)
};

/** @brief Loads both profiles (InputError naming the file, line and key of a bad one), compares them and runs the
 *  scenarios. */
DiffReport profile_diff(const DiffOptions& opt);

} // namespace dbosim::calib

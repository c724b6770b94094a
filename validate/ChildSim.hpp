/* dbosim validate — replays a StepPlan on the engine in a forked child (SimGrid runs one simulation per process) and
 * returns every op's predicted start and end. */
#pragma once
#include "sim/plan/StepPlan.hpp"

#include <string>
#include <vector>

namespace dbosim::validate {

struct PredictedOp {
  std::string kind; ///< "A0" ... "C"
  int layer       = 0;
  int ubatch      = 0;
  int stream      = 0;
  double start_us = 0;
  double end_us   = 0;
};

struct Prediction {
  std::vector<PredictedOp> ops; ///< in host issue order
  double makespan_us = 0;       ///< last op end minus first op start
};

/** @brief Simulates `plan` in a child process. @throws InternalError when the child fails. */
Prediction simulate_in_child(const sim::StepPlan& plan);

} // namespace dbosim::validate

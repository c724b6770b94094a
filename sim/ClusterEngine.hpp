/* dbosim — replays one step of every rank of an EP group on SimGrid: each distinct rank (a class of ranks whose op
 * durations are identical, the exact symmetry shortcut) gets its own GPU host, fabric host, host actor and two
 * stream actors, as in TimelineEngine; the dispatch and combine collectives couple them: a rank's collective ends
 * when the slowest participant's has (each runs its own duration from its own start, then waits for the others).
 * SimGrid runs one simulation per process: call run() once. */
#pragma once
#include "sim/Schedule.hpp"
#include "sim/StepPlan.hpp"
#include "sim/Timeline.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Timelines of every rank class of the last simulated step. */
struct ClusterTimeline {
  std::vector<Timeline> classes;    ///< by class
  std::vector<double> step_time_us; ///< every simulated step: the last rank's end
  double step_time() const { return step_time_us.empty() ? 0 : step_time_us.back(); }
};

class ClusterEngine {
public:
  /** @brief One schedule and plan per rank class (same DAG shape, own durations); all must outlive the engine.
   *  @throws InternalError when the schedules differ in shape. */
  ClusterEngine(const std::vector<Schedule>& scheds, const std::vector<StepPlan>& plans);

  /** @brief Simulates `steps` back-to-back steps; see TimelineEngine::run. */
  ClusterTimeline run(int steps = 1, const std::vector<std::string>& simgrid_args = {});

private:
  const std::vector<Schedule>& scheds_;
  const std::vector<StepPlan>& plans_;
};

} // namespace dbosim::sim

/* dbosim — replays one step of every rank of an EP group on SimGrid: each distinct rank (a class of ranks whose op
 * durations are identical, the exact symmetry shortcut) gets its own GPU host, fabric host, host actor and two
 * stream actors, as in TimelineEngine; the dispatch and combine collectives couple them: a rank's collective ends
 * when the slowest participant's has (each runs its own duration from its own start, then waits for the others).
 * SimGrid runs one simulation per process: call run() once. */
#pragma once
#include "sim/engine/Timeline.hpp"
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/Schedule.hpp"

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
  /** @brief One schedule (the DAG every rank runs, built from any class's plan) and one plan per rank class (its op
   *  durations are read from the plan); both must outlive the engine.
   *  @throws InternalError when a plan lacks one of the schedule's ops. */
  ClusterEngine(const Schedule& sched, const std::vector<StepPlan>& plans);

  /** @brief Simulates `steps` back-to-back steps on SimGrid; see TimelineEngine::run. */
  ClusterTimeline run(int steps = 1, const std::vector<std::string>& simgrid_args = {});

  /** @brief True when no two activities of a rank ever share a resource — comm kernels hold no SMs and the host
   *  never blocks on a stream (no host_sync_after_comm) — so every op runs for exactly its duration and the
   *  timeline is the max-plus recursion start = max(issue, stream predecessor's end, producers' ends), a
   *  collective's end = max over ranks of (start + own duration). Then replay() gives SimGrid's timeline exactly. */
  bool exact_replay_applies() const { return replay_inexact_reason().empty(); }
  /** @brief Why the replay is not exact (the first rank class for which sim::replay_inexact_reason is not empty), or
   *  empty when it is. */
  std::string replay_inexact_reason() const;

  /** @brief The max-plus replay (no SimGrid, callable any number of times); InternalError unless
   *  exact_replay_applies(). Same semantics and records as run(). */
  ClusterTimeline replay(int steps = 1) const;

private:
  const Schedule& sched_;
  const std::vector<StepPlan>& plans_;
  /** Per class and vertex: the op's duration on its stream (partitioned when an SM partition holds, plus kernel gaps).
   */
  std::vector<std::vector<double>> stream_us_;
  std::vector<std::vector<double>> flight_us_; ///< per class and op: a collective's flight before its recv hook
};

} // namespace dbosim::sim

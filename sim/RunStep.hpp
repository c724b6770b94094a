/* dbosim — the one way to run a single-rank step: replay the schedule on the engine, check the timeline, measure it.
 * `dbosim run`, the serving step-time oracle and validate's replays all call run_step, so none of them can skip the
 * timeline's guards. */
#pragma once
#include "sim/Metrics.hpp"
#include "sim/Schedule.hpp"
#include "sim/StepPlan.hpp"
#include "sim/Timeline.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

struct StepRunOptions {
  std::vector<std::string> simgrid_args; ///< extra SimGrid `--cfg`/`--log` options (after dbosim's defaults)
};

/** @brief What one replayed step gives: every op's times and the figures drawn from them. */
struct StepRun {
  Timeline timeline;
  Metrics metrics;
};

/** @brief Replays `sched` (built from `plan`: sim::build_schedule) for one step on the TimelineEngine, checks the
 *  timeline (require_valid_timeline: stream order, dependencies, host issue, no op faster than its cost) and computes
 *  its metrics. Starts SimGrid: once per process (sim/ChildProcess runs a second one in a child).
 *  @throws InternalError when the timeline breaks an invariant. */
StepRun run_step(const StepPlan& plan, const Schedule& sched, const StepRunOptions& opt = {});

} // namespace dbosim::sim

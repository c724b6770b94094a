/* dbosim — the one way to run a single-rank step: replay the schedule on the engine, check the timeline, measure it.
 * `dbosim run`, the serving step-time oracle and validate's replays all call run_step, so none of them can skip the
 * timeline's guards. */
#pragma once
#include "sim/engine/StepEngine.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/output/Metrics.hpp"
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/Schedule.hpp"

#include <functional>
#include <string>
#include <vector>

namespace dbosim::sim {

struct StepRunOptions {
  std::vector<std::string> simgrid_args; ///< extra SimGrid `--cfg`/`--log` options (after dbosim's defaults)
  EngineKind engine         = EngineKind::simgrid;
  std::string engine_option = "--engine"; ///< named by the error when the replay is asked for and not exact
};

/** @brief What one replayed step gives: every op's times and the figures drawn from them. */
struct StepRun {
  Timeline timeline;
  Metrics metrics;
  EngineKind engine = EngineKind::simgrid; ///< the engine that ran it (simgrid or replay)
};

/** @brief Replays `sched` (built from `plan`: sim::build_schedule) for one step on the engine `opt.engine` picks
 *  (simgrid: TimelineEngine in this process, once per process; replay: the max-plus replay, InputError when it is not
 *  exact; automatic: the replay where exact, else SimGrid in a forked child), checks the timeline
 *  (require_valid_timeline: stream order, dependencies, host issue, no op faster than its cost) and computes its
 *  metrics.
 *  @throws InternalError when the timeline breaks an invariant. */
StepRun run_step(const StepPlan& plan, const Schedule& sched, const StepRunOptions& opt = {});

/** @brief The max-plus replay of one rank's step (ClusterEngine::replay of one rank class): `steps` back-to-back
 *  steps, the last one's records. The caller checks replay_inexact_reason(plan) is empty. */
Timeline replay_timeline(const StepPlan& plan, const Schedule& sched, int steps = 1);

/** @brief `simulate` (a SimGrid run returning its result as bytes) in a forked child, so that this process may run
 *  any number of them; the child's bytes. A failure is the child's InputError (a bad `--simgrid` option) or an
 *  InternalError naming `what`. */
std::string simgrid_child_bytes(const std::function<std::string()>& simulate, const std::string& what);

} // namespace dbosim::sim

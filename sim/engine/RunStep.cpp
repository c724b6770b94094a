#include "sim/engine/RunStep.hpp"

#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/TimelineEngine.hpp"
#include "sim/output/OutputGuards.hpp"
#include "sim/output/TimelineBytes.hpp"

#include <fmt/format.h>

namespace dbosim::sim {

Timeline replay_timeline(const StepPlan& plan, const Schedule& sched, int steps)
{
  const std::vector<StepPlan> one{plan};
  ClusterEngine engine(sched, one);
  ClusterTimeline ct = engine.replay(steps);
  return std::move(ct.classes.at(0));
}

std::string simgrid_child_bytes(const std::function<std::string()>& simulate, const std::string& what)
{
  const ChildResult r = run_in_child(simulate);
  if (r.outcome == ChildOutcome::input_error)
    throw InputError("--simgrid", r.message);
  if (!r.ok())
    throw InternalError(
        fmt::format("the SimGrid child replaying {} failed ({}): {}", what, child_outcome_name(r.outcome), r.message));
  return r.payload;
}

StepRun run_step(const StepPlan& plan, const Schedule& sched, const StepRunOptions& opt)
{
  StepRun r;
  const std::string inexact = opt.engine == EngineKind::simgrid ? "" : replay_inexact_reason(plan);
  if (opt.engine == EngineKind::replay && !inexact.empty())
    refuse_inexact_replay(opt.engine_option, inexact);
  if (opt.engine == EngineKind::simgrid) {
    TimelineEngine engine(sched, plan);
    r.timeline = engine.run(1, opt.simgrid_args);
  } else if (inexact.empty()) {
    r.timeline = replay_timeline(plan, sched);
    r.engine   = EngineKind::replay;
  } else {
    r.timeline = timeline_from_bytes(
        simgrid_child_bytes([&] { return timeline_bytes(TimelineEngine(sched, plan).run(1, opt.simgrid_args)); },
                            "schedule " + sched.name));
  }
  require_valid_timeline(sched, r.timeline);
  r.metrics = compute_metrics(sched, r.timeline);
  return r;
}

} // namespace dbosim::sim

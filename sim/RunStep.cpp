#include "sim/RunStep.hpp"

#include "sim/OutputGuards.hpp"
#include "sim/TimelineEngine.hpp"

namespace dbosim::sim {

StepRun run_step(const StepPlan& plan, const Schedule& sched, const StepRunOptions& opt)
{
  TimelineEngine engine(sched, plan);
  StepRun r;
  r.timeline = engine.run(1, opt.simgrid_args);
  require_valid_timeline(sched, r.timeline);
  r.metrics = compute_metrics(sched, r.timeline);
  return r;
}

} // namespace dbosim::sim

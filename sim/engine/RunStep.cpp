#include "sim/engine/RunStep.hpp"

#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/TimelineEngine.hpp"
#include "sim/output/OutputGuards.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace dbosim::sim {

static_assert(std::is_trivially_copyable_v<OpRecord>, "a child ships op records as their bytes");

std::string timeline_bytes(const Timeline& tl)
{
  const std::uint64_t n = tl.ops.size(), steps = tl.step_time_us.size();
  std::string out;
  out.reserve(2 * sizeof n + n * sizeof(OpRecord) + steps * sizeof(double));
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(&steps), sizeof steps);
  if (n > 0) // an empty vector's data() may be null, which append/memcpy must not be given
    out.append(reinterpret_cast<const char*>(tl.ops.data()), n * sizeof(OpRecord));
  if (steps > 0)
    out.append(reinterpret_cast<const char*>(tl.step_time_us.data()), steps * sizeof(double));
  return out;
}

Timeline timeline_from_bytes(const std::string& bytes)
{
  std::uint64_t n = 0, steps = 0;
  if (bytes.size() < 2 * sizeof n)
    throw InternalError(fmt::format("a timeline of {} bytes is too short for its header", bytes.size()));
  std::memcpy(&n, bytes.data(), sizeof n);
  std::memcpy(&steps, bytes.data() + sizeof n, sizeof steps);
  if (bytes.size() != 2 * sizeof n + n * sizeof(OpRecord) + steps * sizeof(double))
    throw InternalError(fmt::format("a timeline of {} ops and {} steps cannot be {} bytes", n, steps, bytes.size()));
  Timeline tl;
  tl.ops.resize(n);
  tl.step_time_us.resize(steps);
  if (n > 0)
    std::memcpy(tl.ops.data(), bytes.data() + 2 * sizeof n, n * sizeof(OpRecord));
  if (steps > 0)
    std::memcpy(tl.step_time_us.data(), bytes.data() + 2 * sizeof n + n * sizeof(OpRecord), steps * sizeof(double));
  return tl;
}

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

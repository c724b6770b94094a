#include "validate/ChildSim.hpp"

#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace dbosim::validate {

static std::string simulate_here(const sim::StepPlan& plan)
{
  const sim::Schedule sched = sim::build_schedule(plan);
  const sim::Timeline tl    = sim::run_step(plan, sched).timeline;
  nlohmann::json ops        = nlohmann::json::array();
  for (sim::OpVertex v : sched.issue_order) {
    const sim::Op& op = sched.ops[v];
    ops.push_back({sim::op_kind_name(op.kind), op.layer, op.ubatch, static_cast<int>(op.stream), tl.ops[v].start_us,
                   tl.ops[v].end_us});
  }
  return ops.dump();
}

Prediction simulate_in_child(const sim::StepPlan& plan)
{
  const sim::ChildResult child = sim::run_in_child([&] { return simulate_here(plan); });
  if (!child.ok() || child.payload.empty())
    throw InternalError(fmt::format("validate: the engine child failed for schedule {} ({}): {}",
                                    sim::schedule_name(plan.schedule), sim::child_outcome_name(child.outcome),
                                    child.message));
  const std::string& text = child.payload;
  Prediction p;
  double lo = 1e300, hi = 0;
  for (const auto& o : nlohmann::json::parse(text)) {
    PredictedOp op{o[0].get<std::string>(), o[1].get<int>(),    o[2].get<int>(),
                   o[3].get<int>(),         o[4].get<double>(), o[5].get<double>()};
    lo = std::min(lo, op.start_us);
    hi = std::max(hi, op.end_us);
    p.ops.push_back(op);
  }
  p.makespan_us = p.ops.empty() ? 0 : hi - lo;
  return p;
}

} // namespace dbosim::validate

#include "sim/schedules/ScheduleRegistry.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace dbosim::sim {

namespace {
/** What a schedule's ops, orders and graph depend on (its builders read no number of the plan): the schedule, the
 *  layers, the phase, the DBO event rule, and which ops each micro-batch's dense and MoE layers hold, in order. */
using ScheduleShape = std::tuple<ScheduleId, int, int, bool, bool, std::vector<std::vector<OpKind>>>;

ScheduleShape schedule_shape(const StepPlan& plan)
{
  std::vector<std::vector<OpKind>> kinds;
  for (const UbatchCosts& u : plan.ubatches)
    for (const std::vector<OpSpec>* ops : {&u.dense, &u.moe}) {
      kinds.emplace_back();
      for (const OpSpec& o : *ops)
        kinds.back().push_back(o.kind);
    }
  return {plan.schedule,   plan.num_layers, plan.first_k_dense, plan.prefill, plan.collectives_wait_compute_tail,
          std::move(kinds)};
}

/** The schedules built last in this thread, by shape (a serving run asks thousands of step shapes of a few). */
std::map<ScheduleShape, Schedule>& kept_schedules()
{
  thread_local std::map<ScheduleShape, Schedule> kept;
  return kept;
}
constexpr std::size_t max_kept_schedules = 8;
} // namespace

const std::vector<ScheduleEntry>& schedule_registry()
{
#define DBOSIM_SCHEDULE_ENTRY(name, ubatches, engines, doc)                                                            \
  ScheduleEntry{#name, ScheduleId::name, doc, &build_##name, ubatches, engines},
  static const std::vector<ScheduleEntry> table{DBOSIM_SCHEDULE_TABLE(DBOSIM_SCHEDULE_ENTRY)};
#undef DBOSIM_SCHEDULE_ENTRY
  return table;
}

std::string schedule_names()
{
  std::string names;
  for (const ScheduleEntry& e : schedule_registry())
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

const ScheduleEntry& schedule_entry(ScheduleId id) { return schedule_registry().at(std::size_t(id)); }

Schedule build_schedule(const StepPlan& plan)
{
  const ScheduleEntry& e = schedule_entry(plan.schedule);
  if (plan.num_ubatches() != e.num_ubatches)
    throw InternalError(fmt::format("schedule {} needs {} micro-batch(es), the plan has {}", e.name, e.num_ubatches,
                                    plan.num_ubatches()));
  // A schedule of the same shape, built before, with this plan's numbers: what e.build(plan) returns.
  ScheduleShape shape = schedule_shape(plan);
  auto& kept          = kept_schedules();
  if (const auto at = kept.find(shape); at != kept.end()) {
    Schedule s = at->second;
    set_op_numbers(s, plan);
    return s;
  }
  Schedule s = e.build(plan);
  if (kept.size() >= max_kept_schedules)
    kept.clear();
  kept.emplace(std::move(shape), s);
  return s;
}

void issue_dense_layers_split(ScheduleBuilder& b)
{
  // A micro-batch thread only yields at a collective, and dense layers have none: each thread runs all of them.
  for (int ub = 0; ub < 2; ++ub)
    for (int layer = 0; layer < b.plan().first_k_dense && layer < b.plan().num_layers; ++layer)
      b.issue_serial_layer(layer, ub, StreamId::compute);
}

} // namespace dbosim::sim

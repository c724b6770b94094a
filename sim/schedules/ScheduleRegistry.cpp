#include "sim/schedules/ScheduleRegistry.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

namespace dbosim::sim {

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
  return e.build(plan);
}

void issue_dense_layers_split(ScheduleBuilder& b)
{
  // A micro-batch thread only yields at a collective, and dense layers have none: each thread runs all of them.
  for (int ub = 0; ub < 2; ++ub)
    for (int layer = 0; layer < b.plan().first_k_dense && layer < b.plan().num_layers; ++layer)
      b.issue_serial_layer(layer, ub, StreamId::compute);
}

} // namespace dbosim::sim

#include "sim/ScheduleRegistry.hpp"

#include "config/InputError.hpp"

#include <fmt/format.h>

namespace dbosim::sim {

const std::vector<ScheduleEntry>& schedule_registry()
{
  static const std::vector<ScheduleEntry> table{
      {"serial", "A0 A1 D MLP S C on the compute stream, no overlap", &build_serial, 1},
      {"async_combine", "combine on the comm stream while the shared expert runs; receiver joins by event",
       &build_async_combine, 1},
      {"dbo", "vLLM Dual Batch Overlap: two micro-batches, docs/domain.md section 3 order", &build_dbo, 2},
      {"deepseek_decode", "DeepSeek decode overlap: SHARED+ATTN-0 under DISPATCH, ATTN-1 under COMBINE",
       &build_deepseek_decode, 2},
      {"deepseek_prefill", "DeepSeek prefill overlap: ATTN under COMBINE/DISPATCH, MLP under DISPATCH/COMBINE",
       &build_deepseek_prefill, 2},
  };
  return table;
}

std::string schedule_names()
{
  std::string names;
  for (const ScheduleEntry& e : schedule_registry())
    names += (names.empty() ? "" : ", ") + std::string(e.name);
  return names;
}

Schedule build_schedule(const StepPlan& plan)
{
  for (const ScheduleEntry& e : schedule_registry())
    if (plan.schedule == e.name) {
      if (plan.num_ubatches() != e.num_ubatches)
        throw InternalError(fmt::format("schedule {} needs {} micro-batch(es), the plan has {}", e.name, e.num_ubatches,
                                        plan.num_ubatches()));
      return e.build(plan);
    }
  throw InternalError(fmt::format("unknown schedule '{}' (valid: {})", plan.schedule, schedule_names()));
}

void issue_dense_layers_split(ScheduleBuilder& b)
{
  // A micro-batch thread only yields at a collective, and dense layers have none: each thread runs all of them.
  for (int ub = 0; ub < 2; ++ub)
    for (int layer = 0; layer < b.plan().first_k_dense && layer < b.plan().num_layers; ++layer)
      b.issue_serial_layer(layer, ub, StreamId::compute);
}

} // namespace dbosim::sim

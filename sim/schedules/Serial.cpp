/* dbosim — serial and async-combine schedules (no micro-batches). */
#include "sim/schedules/ScheduleRegistry.hpp"

namespace dbosim::sim {

Schedule build_serial(const StepPlan& plan)
{
  ScheduleBuilder b(plan, "serial");
  for (int layer = 0; layer < plan.num_layers; ++layer)
    b.issue_serial_layer(layer, 0, StreamId::compute);
  return b.finish();
}

/* DeepEP v2 finalize_async (docs/domain.md §2): the combine is launched on the comm stream, the shared expert runs on
 * the compute stream meanwhile, and the receiver makes the compute stream wait on the combine's event. The next
 * layer's A0 depends on C, so that wait is the data edge C -> A0. */
Schedule build_async_combine(const StepPlan& plan)
{
  ScheduleBuilder b(plan, "async_combine");
  for (int layer = 0; layer < plan.num_layers; ++layer) {
    b.issue(OpKind::A0, layer, 0, StreamId::compute);
    b.issue(OpKind::A1, layer, 0, StreamId::compute);
    b.issue(OpKind::D, layer, 0, StreamId::compute);
    b.issue(OpKind::MLP, layer, 0, StreamId::compute);
    b.issue(OpKind::C, layer, 0, StreamId::comm);
    b.issue(OpKind::S, layer, 0, StreamId::compute);
  }
  return b.finish();
}

} // namespace dbosim::sim

/* dbosim — vLLM Dual Batch Overlap (docs/domain.md §3). The documented steady-state order, one cycle per MoE layer L:
 *   D1 send, A0_0, A1_0, D1 recv, D0 send, MLP_1, D0 recv, C1 send, S_1, MLP_0, C1 recv, C0 send, S_0, A0_1, A1_1,
 *   C0 recv
 * Micro-batch 1 runs half a layer ahead of micro-batch 0 on the comm side: the A0_1 A1_1 that close cycle L are
 * layer L+1's, and the first MoE layer's A0_1 A1_1 form the prologue. Without recv hooks a recv is not an op of its
 * own: the consumer's wait on the collective's event is the data edge D -> MLP (C -> A0), and its host cost is counted
 * there. With them (DeepEP low-latency, return_recv_hook) each recv is a kernel issued at its place above by the
 * other micro-batch's thread, which runs the registered hook before its own next step (dbo_maybe_run_recv_hook), on
 * that thread's current stream, the compute stream (vLLM's DeepEP low-latency prepare/finalize switches no stream): a
 * receive kernel takes its time from compute. */
#include "sim/schedules/ScheduleRegistry.hpp"

namespace dbosim::sim {

namespace {

/** vLLM's DeepEP high-throughput prepare/finalize under DBO, its event taken after the yield
 *  (StepPlan::collectives_wait_compute_tail). A thread yields before each dispatch and each combine, so the host issues
 *  per MoE layer L:
 *    A0_0 A1_0 | A0_1 A1_1 | D_0 S_0 MLP_0 | D_1 S_1 MLP_1 | C_0 | C_1
 *  and each collective waits for the compute stream's tail at its issue: D_0 for A1_1, D_1 for MLP_0, C_0 for MLP_1.
 *  Only a shared expert beside its own dispatch and the next layer's first attention beside C_1 overlap. */
Schedule build_dbo_tail_wait(const StepPlan& plan)
{
  ScheduleBuilder b(plan, "dbo");
  const StreamId comp = StreamId::compute;
  const StreamId comm = StreamId::comm;
  const int first     = plan.first_k_dense;
  for (int layer = first; layer < plan.num_layers; ++layer) {
    for (int ub = 0; ub < 2; ++ub) {
      if (layer == first) // a thread runs the dense layers up to its first yield, at the first dispatch
        for (int dense = 0; dense < first; ++dense)
          b.issue_serial_layer(dense, ub, comp);
      b.issue(OpKind::A0, layer, ub, comp);
      b.issue(OpKind::A1, layer, ub, comp);
    }
    for (int ub = 0; ub < 2; ++ub) {
      b.issue_after_tail(OpKind::D, layer, ub, comm, comp);
      b.issue(OpKind::S, layer, ub, comp);
      b.issue(OpKind::MLP, layer, ub, comp);
    }
    for (int ub = 0; ub < 2; ++ub)
      b.issue_after_tail(OpKind::C, layer, ub, comm, comp);
  }
  if (first >= plan.num_layers) // no MoE layer: no yield, each thread runs the dense layers
    issue_dense_layers_split(b);
  return b.finish();
}

} // namespace

Schedule build_dbo(const StepPlan& plan)
{
  if (plan.collectives_wait_compute_tail)
    return build_dbo_tail_wait(plan);
  ScheduleBuilder b(plan, "dbo");
  const StreamId comp = StreamId::compute;
  const StreamId comm = StreamId::comm;
  b.place_recv_hooks();
  issue_dense_layers_split(b);
  const int first = plan.first_k_dense;
  if (first < plan.num_layers) {
    b.issue(OpKind::A0, first, 1, comp);
    b.issue(OpKind::A1, first, 1, comp);
  }
  for (int layer = first; layer < plan.num_layers; ++layer) {
    b.issue(OpKind::D, layer, 1, comm);
    b.issue(OpKind::A0, layer, 0, comp);
    b.issue(OpKind::A1, layer, 0, comp);
    b.issue_recv_hook(OpKind::D, layer, 1, comp, 0);
    b.issue(OpKind::D, layer, 0, comm);
    b.issue(OpKind::MLP, layer, 1, comp);
    b.issue_recv_hook(OpKind::D, layer, 0, comp, 1);
    b.issue(OpKind::C, layer, 1, comm);
    b.issue(OpKind::S, layer, 1, comp);
    b.issue(OpKind::MLP, layer, 0, comp);
    b.issue_recv_hook(OpKind::C, layer, 1, comp, 0);
    b.issue(OpKind::C, layer, 0, comm);
    b.issue(OpKind::S, layer, 0, comp);
    if (layer + 1 < plan.num_layers) {
      b.issue(OpKind::A0, layer + 1, 1, comp);
      b.issue(OpKind::A1, layer + 1, 1, comp);
    }
    b.issue_recv_hook(OpKind::C, layer, 0, comp, 1);
  }
  return b.finish();
}

} // namespace dbosim::sim

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

Schedule build_dbo(const StepPlan& plan)
{
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

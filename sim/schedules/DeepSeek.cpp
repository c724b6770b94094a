/* dbosim — DeepSeek's own two-micro-batch overlap (docs/domain.md §6, profile_data). */
#include "sim/schedules/ScheduleRegistry.hpp"

namespace dbosim::sim {

/* Decode (low-latency kernels, no SMs held): per layer L,
 *   [S_0 + A0_1] || D_0;  MLP_0;  A1_1 || C_0;  then roles swap:  [S_1 + A0_0(L+1)] || D_1;  MLP_1;  A1_0(L+1) || C_1.
 * Micro-batch 0 runs half a layer ahead; the first MoE layer's A0_0 A1_0 form the prologue. With recv hooks
 * (DeepEP low-latency, return_recv_hook) each receive kernel runs on the compute stream where the micro-batch waits
 * for its data: D_0's before MLP_0, C_0's before A0_0(L+1), D_1's before MLP_1, C_1's at the end of the layer (profile
 * data: "after RDMA messages are issued, all GPU SMs are freed, and the system waits for the all-to-all
 * communication to complete after the computation has finished"; SGLang's stages [D recv, MLP, C send] [C recv]). */
void issue_deepseek_decode_layers(ScheduleBuilder& b)
{
  const StepPlan& plan = b.plan();
  const StreamId comp  = StreamId::compute;
  const StreamId comm  = StreamId::comm;
  const int first      = plan.first_k_dense;
  b.place_recv_hooks();
  if (first < plan.num_layers) {
    b.issue(OpKind::A0, first, 0, comp);
    b.issue(OpKind::A1, first, 0, comp);
  }
  for (int layer = first; layer < plan.num_layers; ++layer) {
    const bool more = layer + 1 < plan.num_layers;
    b.issue(OpKind::D, layer, 0, comm);
    b.issue(OpKind::S, layer, 0, comp);
    b.issue(OpKind::A0, layer, 1, comp);
    b.issue_recv_hook(OpKind::D, layer, 0, comp, 0);
    b.issue(OpKind::MLP, layer, 0, comp);
    b.issue(OpKind::C, layer, 0, comm);
    b.issue(OpKind::A1, layer, 1, comp);
    b.issue(OpKind::D, layer, 1, comm);
    b.issue(OpKind::S, layer, 1, comp);
    b.issue_recv_hook(OpKind::C, layer, 0, comp, 0);
    if (more)
      b.issue(OpKind::A0, layer + 1, 0, comp);
    b.issue_recv_hook(OpKind::D, layer, 1, comp, 1);
    b.issue(OpKind::MLP, layer, 1, comp);
    b.issue(OpKind::C, layer, 1, comm);
    if (more)
      b.issue(OpKind::A1, layer + 1, 0, comp);
    b.issue_recv_hook(OpKind::C, layer, 1, comp, 1);
  }
}

Schedule build_deepseek_decode(const StepPlan& plan)
{
  ScheduleBuilder b(plan, "deepseek_decode");
  issue_dense_layers_split(b);
  issue_deepseek_decode_layers(b);
  return b.finish();
}

/* Prefill (high-throughput kernels): per layer L,
 *   ATTN_1 || C_0(L-1);  S_0(L-1);  ATTN_0 || D_1;  MLP_1 || D_0;  MLP_0 || C_1;  S_1
 * and the last layer's C_0 and S_0 close the step. */
Schedule build_deepseek_prefill(const StepPlan& plan)
{
  ScheduleBuilder b(plan, "deepseek_prefill");
  const StreamId comp = StreamId::compute;
  const StreamId comm = StreamId::comm;
  issue_dense_layers_split(b);
  const int first = plan.first_k_dense;
  for (int layer = first; layer < plan.num_layers; ++layer) {
    if (layer > first)
      b.issue(OpKind::C, layer - 1, 0, comm);
    b.issue(OpKind::A0, layer, 1, comp);
    b.issue(OpKind::A1, layer, 1, comp);
    if (layer > first)
      b.issue(OpKind::S, layer - 1, 0, comp);
    b.issue(OpKind::D, layer, 1, comm);
    b.issue(OpKind::A0, layer, 0, comp);
    b.issue(OpKind::A1, layer, 0, comp);
    b.issue(OpKind::D, layer, 0, comm);
    b.issue(OpKind::MLP, layer, 1, comp);
    b.issue(OpKind::C, layer, 1, comm);
    b.issue(OpKind::MLP, layer, 0, comp);
    b.issue(OpKind::S, layer, 1, comp);
  }
  if (first < plan.num_layers) {
    b.issue(OpKind::C, plan.num_layers - 1, 0, comm);
    b.issue(OpKind::S, plan.num_layers - 1, 0, comp);
  }
  return b.finish();
}

} // namespace dbosim::sim

/* dbosim — SGLang's two-batch overlap (--enable-two-batch-overlap), as its operations strategy for DeepSeek layers
 * orders it (sgl-project/sglang python/sglang/srt/batch_overlap/operations_strategy.py, the DeepSeek "blog"
 * strategies; two_batch_overlap.py execute_overlapped_operations). Each layer's ops are cut into stages at yield
 * points; one host thread runs the stages of micro-batch a and b alternately on one compute stream, b starting
 * `tbo_delta_stages` stages behind a. A dispatch or combine is issued at the end of a stage ("_a") and waited for in
 * a later one ("_b"), so it is in flight during the other micro-batch's stage in between.
 *
 * Decode (delta 2; stages: [A0] [A1, gate] [D send, S] [D recv, MLP, C send] [C recv]): D of one micro-batch is
 * under its own S and the other's A0, its C under the other's A1 — DeepSeek's decode order (DeepSeek.cpp).
 * Prefill (delta 0; stages: [A0, A1, gate, D send] [D recv, MLP, C send] [S, C recv]): per layer
 *   A_0 D_0 | A_1 D_1 | MLP_0 C_0 | MLP_1 C_1 | S_0 | S_1
 * so D_0 is under A_1, D_1 under MLP_0, C_0 under MLP_1 and S_0, C_1 under S_0 and S_1. */
#include "sim/schedules/ScheduleRegistry.hpp"

namespace dbosim::sim {

namespace {

void issue_sglang_prefill_layers(ScheduleBuilder& b)
{
  const StepPlan& plan = b.plan();
  const StreamId comp  = StreamId::compute;
  const StreamId comm  = StreamId::comm;
  for (int layer = plan.first_k_dense; layer < plan.num_layers; ++layer) {
    for (int ub = 0; ub < 2; ++ub) {
      b.issue(OpKind::A0, layer, ub, comp);
      b.issue(OpKind::A1, layer, ub, comp);
      b.issue(OpKind::D, layer, ub, comm);
    }
    for (int ub = 0; ub < 2; ++ub) {
      b.issue(OpKind::MLP, layer, ub, comp);
      b.issue(OpKind::C, layer, ub, comm);
    }
    for (int ub = 0; ub < 2; ++ub)
      b.issue(OpKind::S, layer, ub, comp);
  }
}

} // namespace

Schedule build_sglang_tbo(const StepPlan& plan)
{
  ScheduleBuilder b(plan, "sglang_tbo");
  issue_dense_layers_split(b);
  if (plan.prefill)
    issue_sglang_prefill_layers(b);
  else
    issue_deepseek_decode_layers(b);
  return b.finish();
}

} // namespace dbosim::sim

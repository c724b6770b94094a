#include "sim/plan/SyntheticPlan.hpp"

namespace dbosim::sim {

static OpSpec spec(OpKind k, double us, int kernels) { return OpSpec{k, us, us, kernels}; }

StepPlan synthetic_plan(ScheduleId schedule, int num_layers, int first_k_dense, int ubatches, const LayerDurations& d)
{
  StepPlan plan;
  plan.schedule      = schedule;
  plan.num_layers    = num_layers;
  plan.first_k_dense = first_k_dense;
  const int k        = d.kernels_per_op;
  for (int ub = 0; ub < ubatches; ++ub) {
    UbatchCosts c;
    c.tokens      = 1;
    c.real_tokens = 1;
    c.dense       = {spec(OpKind::A0, d.a0_us, k), spec(OpKind::A1, d.a1_us, k), spec(OpKind::MLP, d.dense_mlp_us, k)};
    c.moe         = {spec(OpKind::A0, d.a0_us, k), spec(OpKind::A1, d.a1_us, k), spec(OpKind::D, d.d_us, k),
                     spec(OpKind::MLP, d.mlp_us, k)};
    if (d.s_us >= 0)
      c.moe.push_back(spec(OpKind::S, d.s_us, k));
    c.moe.push_back(spec(OpKind::C, d.c_us, k));
    plan.ubatches.push_back(std::move(c));
  }
  return plan;
}

} // namespace dbosim::sim

#include "models/FfnOps.hpp"

#include <cmath>

namespace dbosim::models {

ExpertLoad expert_load(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, int redundant_experts)
{
  ExpertLoad l;
  const int physical  = m.num_routed_experts + (par.ep > 1 ? redundant_experts : 0);
  const double routed = physical; // slots: balanced routing spreads an expert's load over its replicas
  if (par.ep <= 1) {
    l.local_experts = m.num_routed_experts;
    l.group_tokens  = s.tokens;
    l.intermediate  = m.moe_intermediate / par.tp;
  } else {
    // Every DP rank of the EP group brings its own tokens; the tp ranks of one attention group share theirs.
    l.local_experts = physical / par.ep;
    l.group_tokens  = double(s.tokens) * par.ep / par.tp;
    l.intermediate  = m.moe_intermediate;
  }
  l.rows = l.group_tokens * m.top_k * l.local_experts / routed;
  // A token picks top_k distinct experts: a given slot is missed with probability 1 - top_k/slots.
  const double miss = std::pow(1.0 - m.top_k / routed, l.group_tokens);
  l.active_experts  = l.local_experts * (1.0 - miss);
  return l;
}

std::vector<KernelWork> routed_mlp_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s,
                                           int redundant_experts)
{
  const ExpertLoad l = expert_load(m, par, s, redundant_experts);
  std::vector<KernelWork> out;
  out.push_back(grouped_gemm_kernel("experts_gate_up", l.rows, l.active_experts, l.local_experts, 2 * l.intermediate,
                                    m.hidden, m.weight_dtype));
  out.push_back(streaming_kernel("experts_silu_mul", l.rows, l.intermediate, 2, 1, "silu_mul"));
  out.push_back(grouped_gemm_kernel("experts_down", l.rows, l.active_experts, l.local_experts, m.hidden, l.intermediate,
                                    m.weight_dtype));
  return out;
}

std::vector<KernelWork> dense_mlp_kernels(const std::string& prefix, const ModelSpec& m, const ParallelSpec& par,
                                          const StepShape& s, int intermediate)
{
  const int width = intermediate / par.tp;
  const double t  = s.tokens;
  std::vector<KernelWork> out;
  out.push_back(gemm_kernel(prefix + "_gate_up", t, 2 * width, m.hidden, m.weight_dtype));
  out.push_back(streaming_kernel(prefix + "_silu_mul", t, width, 2, 1, "silu_mul"));
  out.push_back(gemm_kernel(prefix + "_down", t, m.hidden, width, m.weight_dtype));
  return out;
}

} // namespace dbosim::models

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

ExpertLoad scaled_expert_load(const ModelSpec& m, const ExpertLoad& l, int redundant_experts, int ep, double load)
{
  if (load == 1.0 || l.local_experts <= 0)
    return l;
  ExpertLoad h       = l;
  const double slots = m.num_routed_experts + (ep > 1 ? redundant_experts : 0);
  const double miss  = std::pow(1.0 - m.top_k / slots, l.group_tokens * load);
  h.rows             = l.rows * load;
  h.active_experts   = l.local_experts * (1.0 - miss);
  return h;
}

namespace {
constexpr const char* src_masked = "vllm/model_executor/layers/fused_moe/batched_deep_gemm_moe.py: "
                                   "BatchedDeepGemmExperts.apply";
constexpr const char* src_contig = "vllm/model_executor/layers/fused_moe/deep_gemm_moe.py: DeepGemmExperts.apply";
constexpr const char* src_mlp    = "vllm/model_executor/models/deepseek_v2.py: DeepseekV2MLP.forward";
} // namespace

std::vector<KernelWork> routed_mlp_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s,
                                           int redundant_experts, double load)
{
  const ExpertLoad l =
      scaled_expert_load(m, expert_load(m, par, s, redundant_experts), redundant_experts, par.ep, load);
  // DeepEP low-latency hands the experts a masked [experts, max tokens, hidden] FP8 buffer (no permutation); the
  // other backends deliver tokens in arrival order, which the experts permute into expert-contiguous rows first and
  // un-permute and reduce (top-k weights) after.
  const bool masked     = par.ep > 1 && all2all_traits_of(par.backend).masked_expert_input;
  const LinearFormat f  = linear_format(m, OpClass::routed_experts);
  const bool low_bits   = f.quantize_input;
  const char* src       = masked ? src_masked : src_contig;
  const std::string act = low_bits ? "experts_silu_mul_quant" : "experts_silu_mul";
  std::vector<KernelWork> out;
  if (!masked)
    out.push_back(launched_at(streaming_kernel("experts_permute", l.rows, m.hidden, 1, 1, ""),
                              source_note(src, " (permute rows to expert-contiguous order)")));
  out.push_back(launched_at(grouped_gemm_kernel("experts_gate_up", l.rows, l.active_experts, l.local_experts,
                                                2 * l.intermediate, m.hidden, f),
                            src));
  // SiLU-and-mul, fused with the FP8 quantization of the down GEMM's input when the experts are 8-bit.
  out.push_back(launched_at(streaming_kernel(act, l.rows, l.intermediate, 2, 1, "silu_mul"), src));
  out.push_back(launched_at(
      grouped_gemm_kernel("experts_down", l.rows, l.active_experts, l.local_experts, m.hidden, l.intermediate, f),
      src));
  if (!masked)
    out.push_back(launched_at(streaming_kernel("experts_unpermute_reduce", l.rows, m.hidden, 1, 0, ""),
                              source_note(src, " (un-permute and top-k weighted reduce)")));
  return out;
}

std::vector<KernelWork> dense_mlp_kernels(const std::string& prefix, const ModelSpec& m, const ParallelSpec& par,
                                          const StepShape& s, int intermediate, OpClass cls)
{
  const LinearFormat f = linear_format(m, cls);
  const int width      = intermediate / par.tp;
  const double t       = s.tokens;
  std::vector<KernelWork> out;
  add_linear(out, prefix + "_gate_up", t, 2 * width, m.hidden, f, src_mlp);
  out.push_back(launched_at(streaming_kernel(prefix + "_silu_mul", t, width, 2, 1, "silu_mul"),
                            "vllm/model_executor/layers/activation.py: SiluAndMul.forward"));
  add_linear(out, prefix + "_down", t, m.hidden, width, f, src_mlp);
  return out;
}

} // namespace dbosim::models

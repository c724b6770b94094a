#include "serving/KvCapacity.hpp"

#include "base/InputError.hpp"
#include "models/Precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dbosim::serving {

using models::AttentionKind;
using models::dtype_bytes;

double kv_bytes_per_token(const models::ModelSpec& m, int tp)
{
  const double b = dtype_bytes(m.kv_dtype);
  if (m.attention == AttentionKind::mla)
    return double(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * b * m.num_layers;
  const int kv_heads = std::max(1, (m.gqa.num_kv_heads + tp - 1) / tp); // a KV head is replicated when tp > heads
  return 2.0 * kv_heads * m.gqa.head_dim * b * m.num_layers;
}

double weight_bytes_per_gpu(const models::ModelSpec& m, const models::ParallelSpec& p)
{
  const double h = m.hidden;
  double attn    = 0;
  if (m.attention == AttentionKind::mla) {
    const auto& a     = m.mla;
    const double qk   = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const double q_in = a.q_lora_rank > 0 ? a.q_lora_rank : h;
    const double q_a  = a.q_lora_rank > 0 ? h * a.q_lora_rank : 0;
    attn              = q_a + q_in * a.num_heads * qk + h * (a.kv_lora_rank + a.qk_rope_head_dim) +
           a.kv_lora_rank * a.num_heads * (a.qk_nope_head_dim + a.v_head_dim) + a.num_heads * a.v_head_dim * h;
  } else {
    const auto& g = m.gqa;
    attn          = h * (g.num_heads + 2.0 * g.num_kv_heads) * g.head_dim + g.num_heads * g.head_dim * h;
  }
  const double tp = p.tp;
  using models::OpClass;
  const double attn_b   = attn / tp * models::weight_bytes_per_element(m, OpClass::attention);
  const double dense_b  = models::weight_bytes_per_element(m, OpClass::dense_mlp);
  const double routed_b = models::weight_bytes_per_element(m, OpClass::routed_experts);
  const double shared_b = models::weight_bytes_per_element(m, OpClass::shared_experts);
  const double dense    = 3.0 * h * m.dense_intermediate / tp * dense_b;
  // ep > 1: whole experts, spread over the EP group; ep = 1: every expert on every rank, each sliced over the TP
  // group (models::expert_load's expert width).
  const double local_experts = std::ceil(double(m.num_routed_experts) / std::max(1, p.ep));
  const double expert_width  = p.ep > 1 ? double(m.moe_intermediate) : double(m.moe_intermediate) / tp;
  const double moe           = local_experts * 3.0 * h * expert_width * routed_b +
                     3.0 * h * m.shared_intermediate / tp * shared_b + h * m.num_routed_experts * 4.0; // fp32 router
  // Embedding (BF16) and LM head (BF16 unless precision.lm_head sets a format).
  const double embed =
      m.precision.lm_head
          ? m.vocab * h / tp * 2.0 + m.vocab * h / tp * models::weight_bytes_per_element(m, OpClass::lm_head)
          : 2.0 * m.vocab * h / tp * 2.0;
  return m.num_layers * attn_b + m.first_k_dense * dense + m.num_moe_layers() * moe + embed;
}

double mtp_weight_bytes_per_gpu(const models::ModelSpec& m, const models::ParallelSpec& p)
{
  models::ModelSpec block = m;
  block.num_layers        = 1; // mtp_block: shaped as the target's MoE layers
  block.first_k_dense     = 0;
  const double h          = m.hidden;
  const double embedding  = double(m.vocab) * h / p.tp * 2.0; // BF16, shared with the target: not counted twice
  return weight_bytes_per_gpu(block, p) - embedding + 2.0 * h * h * 2.0;
}

namespace {

/** Peak activations of vLLM's profiling run at max_num_batched_tokens (an estimate: BF16 residual stream, norm,
 *  attention and MoE outputs (4 × hidden) plus the widest FFN intermediate (gate and up, 2 ×), and FP32 logits of
 *  max_num_seqs sampled tokens). */
double activation_bytes(const Scenario& s)
{
  const auto& m       = s.model;
  const double widest = std::max({double(m.dense_intermediate) / s.parallel.tp,
                                  double(m.shared_intermediate) / s.parallel.tp, double(m.moe_intermediate) * m.top_k});
  return double(s.scheduler.max_num_batched_tokens) * 2.0 * (4.0 * m.hidden + 2.0 * widest) +
         double(s.scheduler.max_num_seqs) * m.vocab / s.parallel.tp * 4.0;
}

} // namespace

nlohmann::ordered_json KvCapacity::to_json() const
{
  return {{"kv_bytes_per_token", kv_bytes_per_token},
          {"weight_bytes", weight_bytes},
          {"activation_bytes", activation_bytes},
          {"budget_bytes", budget_bytes},
          {"num_blocks", num_blocks},
          {"block_size", block_size},
          {"kv_tokens", tokens()},
          {"overridden", overridden}};
}

KvCapacity kv_capacity(const Scenario& s)
{
  KvCapacity c;
  c.block_size         = s.scheduler.block_size;
  c.kv_bytes_per_token = kv_bytes_per_token(s.model, s.parallel.tp);
  c.weight_bytes       = weight_bytes_per_gpu(s.model, s.parallel);
  if (s.speculative.enabled()) { // the MTP layer keeps its own KV cache and weights
    c.kv_bytes_per_token += kv_bytes_per_token(s.model, s.parallel.tp) / std::max(1, s.model.num_layers);
    c.weight_bytes += mtp_weight_bytes_per_gpu(s.model, s.parallel);
  }
  c.activation_bytes = activation_bytes(s);
  c.budget_bytes     = s.hw.hbm_capacity_bytes * s.scheduler.gpu_memory_utilization;
  if (s.scheduler.num_gpu_blocks_override > 0) {
    c.num_blocks = s.scheduler.num_gpu_blocks_override;
    c.overridden = true;
    return c;
  }
  const double free_bytes  = c.budget_bytes - c.weight_bytes - c.activation_bytes;
  const double block_bytes = c.kv_bytes_per_token * c.block_size;
  if (!(free_bytes > block_bytes) || !(block_bytes > 0))
    throw InputError(s.file, 0, 0, "scheduler.gpu_memory_utilization",
                     fmt::format("no room for a KV cache: {:.1f} GB budget on {} - {:.1f} GB weights - {:.1f} GB "
                                 "activations (more GPUs, a larger profile, or a higher utilization)",
                                 c.budget_bytes / 1e9, s.hw.name, c.weight_bytes / 1e9, c.activation_bytes / 1e9),
                     "a budget above weights + activations");
  c.num_blocks = static_cast<long>(std::floor(free_bytes / block_bytes));
  return c;
}

} // namespace dbosim::serving

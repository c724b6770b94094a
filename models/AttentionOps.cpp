#include "models/AttentionOps.hpp"

#include "models/PrefillAttention.hpp"

#include <algorithm>

namespace dbosim::models {
namespace {
constexpr double act_bytes = 2.0; // bf16 queries, outputs and rotary parts

int heads_per_rank(int heads, int tp) { return heads / tp; }

/** Router: the gate GEMM (bf16 weights, tokens x experts logits) and one top-k/softmax kernel over the logits. */
void add_router(std::vector<KernelWork>& out, const ModelSpec& m, double tokens)
{
  out.push_back(gemm_kernel("router_gate", tokens, m.num_routed_experts, m.hidden, m.attn_dtype));
  out.push_back(streaming_kernel("router_topk", tokens, m.num_routed_experts, 2.0, 0.0, ""));
}

std::vector<KernelWork> mla_a0(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const MlaSpec& a  = m.mla;
  const int h       = heads_per_rank(a.num_heads, par.tp);
  const int qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const double t    = s.tokens;
  std::vector<KernelWork> out;
  out.push_back(streaming_kernel("input_rmsnorm", t, m.hidden, 1, 1, "rmsnorm"));
  if (a.q_lora_rank > 0) {
    // vLLM fuses q_a_proj and kv_a_proj_with_mqa into one GEMM over the hidden state.
    out.push_back(gemm_kernel("fused_qkv_a_proj", t, a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim, m.hidden,
                              m.attn_dtype));
    out.push_back(streaming_kernel("q_a_layernorm", t, a.q_lora_rank, 1, 1, "rmsnorm"));
    out.push_back(streaming_kernel("kv_a_layernorm", t, a.kv_lora_rank, 1, 1, "rmsnorm"));
    out.push_back(gemm_kernel("q_b_proj", t, h * qk_head, a.q_lora_rank, m.attn_dtype));
  } else {
    out.push_back(gemm_kernel("q_proj", t, h * qk_head, m.hidden, m.attn_dtype));
    out.push_back(gemm_kernel("kv_a_proj_with_mqa", t, a.kv_lora_rank + a.qk_rope_head_dim, m.hidden, m.attn_dtype));
    out.push_back(streaming_kernel("kv_a_layernorm", t, a.kv_lora_rank, 1, 1, "rmsnorm"));
  }
  if (s.phase == Phase::prefill) {
    // Prefill runs MLA un-absorbed: the latent of every context token is up-projected to per-head K_nope and V.
    const double context_tokens = double(s.batch) * s.context_len;
    out.push_back(gemm_kernel("kv_b_proj", context_tokens, h * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank,
                              m.attn_dtype));
  }
  // RoPE on q's and k's rotary parts, then the latent + rotary key written to the cache.
  KernelWork rope = streaming_kernel("rope_and_cache_write", t, (h + 1) * a.qk_rope_head_dim, 1, 1, "");
  if (t > 0)
    rope.bytes += t * (a.kv_lora_rank + a.qk_rope_head_dim) * dtype_bytes(m.kv_dtype);
  out.push_back(rope);
  return out;
}

std::vector<KernelWork> mla_a1(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, bool moe_layer)
{
  const MlaSpec& a  = m.mla;
  const int h       = heads_per_rank(a.num_heads, par.tp);
  const int latent  = a.kv_lora_rank + a.qk_rope_head_dim; // per-token cache entry (shared by all heads)
  const double t    = s.tokens;
  const double kv_b = dtype_bytes(m.kv_dtype);
  std::vector<KernelWork> out;
  if (s.phase == Phase::decode) {
    // Absorbed MLA (FlashMLA): q_nope x W_UK per head, attention in the latent space, then x W_UV per head.
    out.push_back(head_bmm_kernel("q_nope_x_w_uk", t, h, a.kv_lora_rank, a.qk_nope_head_dim, m.attn_dtype));
    KernelWork core;
    core.name          = "mla_decode";
    core.efficiency    = Efficiency::attention;
    core.compute_dtype = DType::bf16;
    core.table_family  = "mla_decode";
    core.table_dims    = {{"context", s.context_len}, {"heads", h}};
    core.table_tokens  = s.batch;
    if (t > 0) {
      // QK^T over d_qk = latent, PV over d_v = kv_lora_rank, for every (query, head, key).
      core.flops = 2.0 * t * h * s.context_len * (latent + a.kv_lora_rank);
      core.bytes = double(s.batch) * s.context_len * latent * kv_b + t * h * (latent + a.kv_lora_rank) * act_bytes;
    }
    out.push_back(core);
    out.push_back(head_bmm_kernel("out_x_w_uv", t, h, a.v_head_dim, a.kv_lora_rank, m.attn_dtype));
  } else {
    out.push_back(prefill_attention_kernel(m, par, s)); // un-absorbed, over each request's context
  }
  out.push_back(gemm_kernel("o_proj", t, m.hidden, h * a.v_head_dim, m.attn_dtype));
  if (moe_layer)
    add_router(out, m, t);
  return out;
}

int kv_heads_per_rank(const GqaSpec& g, int tp) { return std::max(1, g.num_kv_heads / tp); }

std::vector<KernelWork> gqa_a0(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const GqaSpec& g = m.gqa;
  const int h      = heads_per_rank(g.num_heads, par.tp);
  const int kvh    = kv_heads_per_rank(g, par.tp);
  const double t   = s.tokens;
  std::vector<KernelWork> out;
  out.push_back(streaming_kernel("input_rmsnorm", t, m.hidden, 1, 1, "rmsnorm"));
  out.push_back(gemm_kernel("qkv_proj", t, (h + 2 * kvh) * g.head_dim, m.hidden, m.attn_dtype));
  KernelWork rope = streaming_kernel("rope_and_cache_write", t, (h + kvh) * g.head_dim, 1, 1, "");
  if (t > 0)
    rope.bytes += t * 2.0 * kvh * g.head_dim * dtype_bytes(m.kv_dtype);
  out.push_back(rope);
  return out;
}

std::vector<KernelWork> gqa_a1(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, bool moe_layer)
{
  const GqaSpec& g  = m.gqa;
  const int h       = heads_per_rank(g.num_heads, par.tp);
  const int kvh     = kv_heads_per_rank(g, par.tp);
  const double t    = s.tokens;
  const double kv_b = dtype_bytes(m.kv_dtype);
  std::vector<KernelWork> out;
  KernelWork core;
  core.efficiency    = Efficiency::attention;
  core.compute_dtype = DType::bf16;
  if (s.phase == Phase::decode) {
    core.name         = "attention_decode";
    core.table_family = "attention_decode";
    core.table_dims   = {{"context", s.context_len}, {"heads", h}, {"kv_heads", kvh}, {"head_dim", g.head_dim}};
    core.table_tokens = s.batch;
    if (t > 0) {
      core.flops = 2.0 * t * h * s.context_len * 2.0 * g.head_dim; // QK^T and PV
      core.bytes = double(s.batch) * s.context_len * 2.0 * kvh * g.head_dim * kv_b + t * h * g.head_dim * 2 * act_bytes;
    }
  } else {
    core = prefill_attention_kernel(m, par, s); // over each request's context
  }
  out.push_back(core);
  out.push_back(gemm_kernel("o_proj", t, m.hidden, h * g.head_dim, m.attn_dtype));
  if (moe_layer)
    add_router(out, m, t);
  return out;
}
} // namespace

double causal_pairs(const StepShape& s)
{
  if (s.tokens <= 0 || s.batch <= 0)
    return 0;
  const double q = double(s.tokens) / s.batch;
  const double l = s.context_len;
  return s.batch * (q * (l - q) + q * (q + 1) / 2);
}

std::vector<KernelWork> attention_a0_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  return m.attention == AttentionKind::mla ? mla_a0(m, par, s) : gqa_a0(m, par, s);
}

std::vector<KernelWork> attention_a1_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s,
                                             bool moe_layer)
{
  return m.attention == AttentionKind::mla ? mla_a1(m, par, s, moe_layer) : gqa_a1(m, par, s, moe_layer);
}

} // namespace dbosim::models

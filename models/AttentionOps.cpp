#include "models/AttentionOps.hpp"

#include "models/CostExplain.hpp"
#include "models/PrefillAttention.hpp"

#include <algorithm>

namespace dbosim::models {
namespace {
constexpr double act_bytes = 2.0; // bf16 queries, outputs and rotary parts

// Where vLLM launches each kernel (facts from its code, for --explain).
constexpr const char* src_layer    = "vllm/model_executor/models/deepseek_v2.py: DeepseekV2DecoderLayer.forward";
constexpr const char* src_mla      = "vllm/model_executor/layers/mla.py: MultiHeadLatentAttentionWrapper.forward";
constexpr const char* src_mla_impl = "vllm/v1/attention/backends/mla/common.py: MLACommonImpl.forward";
constexpr const char* src_rope     = "vllm/model_executor/layers/rotary_embedding: RotaryEmbedding.forward";
constexpr const char* src_gate     = "vllm/model_executor/layers/fused_moe: GateLinear.forward (unquantized router)";
constexpr const char* src_topk     = "vllm/model_executor/layers/fused_moe: grouped_topk / fused_topk (one kernel)";
constexpr const char* src_gqa      = "vllm/model_executor/models/qwen3_moe.py: Qwen3MoeAttention.forward";

int heads_per_rank(int heads, int tp) { return heads / tp; }

/** A prefill-phase shape's prompt kernels run: it has no decode part (a plain prefill), or prompt requests beside its
 *  decoding ones (a DP rank with decodes beside padding alone runs none). */
bool has_prompt_requests(const StepShape& s) { return s.decode_batch == 0 || s.batch > s.decode_batch; }

/** The residual add fused into the RMSNorm before attention and before the MoE/MLP (vLLM's fused_add_rms_norm):
 *  reads the hidden state and the residual, writes both. */
KernelWork fused_add_rmsnorm(const std::string& name, double tokens, int hidden)
{
  return launched_at(streaming_kernel(name, tokens, hidden, 2, 2, "rmsnorm"),
                     cost_explanations() ? std::string(src_layer) + " (" + name + ", fused_add_rms_norm)"
                                         : std::string());
}

/** Router: the gate GEMM (bf16 weights: the FP8 checkpoints leave it unquantized, tokens x experts logits) and one
 *  fused top-k kernel over the logits (scoring, group selection, top-k, renormalisation). */
void add_router(std::vector<KernelWork>& out, const ModelSpec& m, double tokens)
{
  out.push_back(launched_at(gemm_kernel("router_gate", tokens, m.num_routed_experts, m.hidden, DType::bf16), src_gate));
  out.push_back(inside(
      launched_at(streaming_kernel("router_topk", tokens, m.num_routed_experts, 2.0, 0.0, ""), src_topk, "reduction"),
      GraphSplit::moe)); // FusedMoE's select_experts runs inside the fused-MoE custom op
}

/** The post-attention RMSNorm (with its residual add) and, on MoE layers, the router: the tail of A1. */
void add_a1_tail(std::vector<KernelWork>& out, const ModelSpec& m, double tokens, bool moe_layer)
{
  out.push_back(fused_add_rmsnorm("post_attention_layernorm", tokens, m.hidden));
  if (moe_layer)
    add_router(out, m, tokens);
}

/** Prefill runs MLA un-absorbed: the latent of every context token of the prompt part of `s` (a prefill-phase shape)
 *  is up-projected to per-head K_nope and V (a mixed step's decoding requests run absorbed and up-project nothing).
 *  The kernel of an MLA prefill step's A0 that reads the prompt's context. */
KernelWork mla_kv_b_proj(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const MlaSpec& a            = m.mla;
  const StepShape prompts     = prompt_part(s);
  const double context_tokens = double(prompts.batch) * prompts.context_len;
  return inside(launched_at(gemm_kernel("kv_b_proj", context_tokens,
                                        heads_per_rank(a.num_heads, par.tp) * (a.qk_nope_head_dim + a.v_head_dim),
                                        a.kv_lora_rank, linear_format(m, OpClass::attention)),
                            source_note(src_mla_impl, " (prefill: kv_b_proj up-projects the context's latents)")),
                GraphSplit::attention);
}

std::vector<KernelWork> mla_a0(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const MlaSpec& a  = m.mla;
  const int h       = heads_per_rank(a.num_heads, par.tp);
  const int qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const double t    = s.tokens;
  std::vector<KernelWork> out;
  const LinearFormat attn_f = linear_format(m, OpClass::attention);
  out.push_back(fused_add_rmsnorm("input_layernorm", t, m.hidden));
  if (a.q_lora_rank > 0) {
    // vLLM fuses q_a_proj and kv_a_proj_with_mqa into one GEMM over the hidden state.
    add_linear(out, "fused_qkv_a_proj", t, a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim, m.hidden, attn_f,
               src_mla);
    out.push_back(launched_at(streaming_kernel("q_a_layernorm", t, a.q_lora_rank, 1, 1, "rmsnorm"), src_mla));
    out.push_back(launched_at(streaming_kernel("kv_a_layernorm", t, a.kv_lora_rank, 1, 1, "rmsnorm"), src_mla));
    add_linear(out, "q_b_proj", t, h * qk_head, a.q_lora_rank, attn_f, src_mla);
  } else {
    add_linear(out, "q_proj", t, h * qk_head, m.hidden, attn_f, src_mla);
    add_linear(out, "kv_a_proj_with_mqa", t, a.kv_lora_rank + a.qk_rope_head_dim, m.hidden, attn_f, src_mla);
    out.push_back(launched_at(streaming_kernel("kv_a_layernorm", t, a.kv_lora_rank, 1, 1, "rmsnorm"), src_mla));
  }
  if (s.phase == Phase::prefill && has_prompt_requests(s))
    out.push_back(mla_kv_b_proj(m, par, s));
  // RoPE on q's and k's rotary parts (one kernel), then the latent + rotary key written to the paged cache (another).
  out.push_back(launched_at(streaming_kernel("rotary_emb", t, (h + 1) * a.qk_rope_head_dim, 1, 1, ""), src_rope));
  KernelWork cache = streaming_kernel("concat_and_cache_mla", t, a.kv_lora_rank + a.qk_rope_head_dim, 1, 0, "");
  if (t > 0)
    cache.bytes += t * (a.kv_lora_rank + a.qk_rope_head_dim) * dtype_bytes(m.kv_dtype);
  out.push_back(inside(launched_at(cache, "vllm/_custom_ops.py: concat_and_cache_mla (MLA attention layer, KV write)"),
                       GraphSplit::attention));
  return out;
}

/** FlashMLA's call over a decode-phase shape `s` (`h` heads on the rank): the split-KV kernel and its combine, timed
 *  together. The one kernel of an MLA decode step's A1 that reads the KV cache. */
KernelWork mla_decode_core(const ModelSpec& m, int h, const StepShape& s)
{
  const MlaSpec& a  = m.mla;
  const int latent  = a.kv_lora_rank + a.qk_rope_head_dim; // per-token cache entry (shared by all heads)
  const double t    = s.tokens;
  const double kv_b = dtype_bytes(m.kv_dtype);
  KernelWork core;
  core.name          = "mla_decode";
  core.efficiency    = Efficiency::attention;
  core.compute_dtype = DType::bf16;
  // The table holds one query token per request (FlashMLA's s_q = 1). A speculative-decoding verify step runs
  // s_q = tokens / batch > 1 per request (more work per request than the table's), so it takes the roofline.
  if (s.tokens == s.batch) {
    core.table_family     = "mla_decode";
    core.table_dims       = {{"context", s.context_len}, {"heads", h}};
    core.table_tokens     = s.batch;
    core.table_interp_dim = "context"; // KV lengths between the measured ones: linear in context
  }
  // FlashMLA's call is two launches, the split-KV kernel and the combine over each split's partial output (fp32 per
  // query head): the measured table times them together; the roofline adds the combine's traffic.
  const KernelWork combine = streaming_kernel("mla_decode_combine", t, h * a.kv_lora_rank, 2, 1, "");
  if (t > 0) {
    // QK^T over d_qk = latent, PV over d_v = kv_lora_rank, for every (query, head, key).
    core.flops = 2.0 * t * h * s.context_len * (latent + a.kv_lora_rank);
    core.bytes =
        double(s.batch) * s.context_len * latent * kv_b + t * h * (latent + a.kv_lora_rank) * act_bytes + combine.bytes;
  }
  core.launches     = 2;
  core.floor_family = "attention";
  core.split        = GraphSplit::attention;
  if (cost_explanations())
    core.source = "vllm/v1/attention/backends/mla/flashmla.py: FlashMLAImpl._forward_decode (flash_mla_with_kvcache: "
                  "the split-KV kernel and its combine kernel)";
  return core;
}

/** Absorbed MLA decode over `s` (a decode-phase shape): the W_UK product, FlashMLA's split-KV kernel with its
 *  combine, the W_UV product. */
void add_mla_decode(std::vector<KernelWork>& out, const ModelSpec& m, int h, const StepShape& s)
{
  const MlaSpec& a = m.mla;
  const double t   = s.tokens;
  // Absorbed MLA (FlashMLA): q_nope x W_UK per head, attention in the latent space, then x W_UV per head. vLLM
  // dequantizes kv_b_proj into W_UK / W_UV once at load: these products run in BF16 whatever the checkpoint.
  out.push_back(
      inside(launched_at(head_bmm_kernel("q_nope_x_w_uk", t, h, a.kv_lora_rank, a.qk_nope_head_dim, DType::bf16),
                         source_note(src_mla_impl, " (torch.bmm with W_UK_T)")),
             GraphSplit::attention));
  out.push_back(mla_decode_core(m, h, s));
  out.push_back(inside(launched_at(head_bmm_kernel("out_x_w_uv", t, h, a.v_head_dim, a.kv_lora_rank, DType::bf16),
                                   source_note(src_mla_impl, " (_v_up_proj: torch.bmm with W_UV)")),
                       GraphSplit::attention));
}

/** o_proj, then the all-reduce of its output over the TP group when there is one (`reduce`). */
void add_o_proj(std::vector<KernelWork>& out, double tokens, int hidden, int in_width, const LinearFormat& f,
                const char* source, const KernelWork* reduce)
{
  add_linear(out, "o_proj", tokens, hidden, in_width, f, source);
  if (reduce)
    out.push_back(*reduce);
}

/** The prompt part's attention of a prefill-phase shape `s` (un-absorbed, over each prompt request's context): the
 *  kernel of an MLA prefill step's A1 that reads the context. */
KernelWork mla_prefill_core(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  return inside(launched_at(prefill_attention_kernel(m, par, prompt_part(s)),
                            "vllm/v1/attention/backends/mla/common.py: MLACommonImpl._forward_prefill (FlashAttention "
                            "over the up-projected context)",
                            "attention"),
                GraphSplit::attention);
}

/** MLA's attention over `s`: absorbed in a decode-phase shape; in a prefill-phase one un-absorbed over each prompt
 *  request's context, a mixed step's decoding requests on the absorbed kernels first (MLACommonImpl.forward: decode
 *  tokens first, then the prefill tokens). A1's kernels that read the context. */
void add_mla_attention(std::vector<KernelWork>& out, const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const int h = heads_per_rank(m.mla.num_heads, par.tp);
  if (s.phase == Phase::decode) {
    add_mla_decode(out, m, h, s);
    return;
  }
  if (s.decode_tokens > 0)
    add_mla_decode(out, m, h, decode_part(s));
  if (has_prompt_requests(s))
    out.push_back(mla_prefill_core(m, par, s));
}

std::vector<KernelWork> mla_a1(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, bool moe_layer,
                               const KernelWork* o_proj_reduce)
{
  const MlaSpec& a = m.mla;
  const int h      = heads_per_rank(a.num_heads, par.tp);
  const double t   = s.tokens;
  std::vector<KernelWork> out;
  const LinearFormat attn_f = linear_format(m, OpClass::attention);
  add_mla_attention(out, m, par, s);
  add_o_proj(out, t, m.hidden, h * a.v_head_dim, attn_f, src_mla, o_proj_reduce);
  add_a1_tail(out, m, t, moe_layer);
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
  const LinearFormat attn_f = linear_format(m, OpClass::attention);
  out.push_back(fused_add_rmsnorm("input_layernorm", t, m.hidden));
  add_linear(out, "qkv_proj", t, (h + 2 * kvh) * g.head_dim, m.hidden, attn_f, src_gqa);
  out.push_back(launched_at(streaming_kernel("rotary_emb", t, (h + kvh) * g.head_dim, 1, 1, ""), src_rope));
  KernelWork cache = streaming_kernel("reshape_and_cache_flash", t, 2 * kvh * g.head_dim, 1, 0, "");
  if (t > 0)
    cache.bytes += t * 2.0 * kvh * g.head_dim * dtype_bytes(m.kv_dtype);
  out.push_back(inside(launched_at(cache, "vllm/_custom_ops.py: reshape_and_cache_flash (attention layer, KV write)"),
                       GraphSplit::attention));
  return out;
}

/** GQA's attention kernel over `s` (`h` query and `kvh` KV heads on the rank): FlashAttention over each request's
 *  context, the decode kernel in a decode-phase shape (the one kernel of its A1 that reads the KV cache). */
KernelWork gqa_attention_core(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, int h, int kvh)
{
  const GqaSpec& g  = m.gqa;
  const double t    = s.tokens;
  const double kv_b = dtype_bytes(m.kv_dtype);
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
  core.floor_family = "attention";
  core.split        = GraphSplit::attention;
  if (cost_explanations())
    core.source = "vllm/v1/attention/backends/flash_attn.py: FlashAttentionImpl.forward";
  return core;
}

std::vector<KernelWork> gqa_a1(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, bool moe_layer,
                               const KernelWork* o_proj_reduce)
{
  const GqaSpec& g = m.gqa;
  const int h      = heads_per_rank(g.num_heads, par.tp);
  const double t   = s.tokens;
  std::vector<KernelWork> out;
  const LinearFormat attn_f = linear_format(m, OpClass::attention);
  out.push_back(gqa_attention_core(m, par, s, h, kv_heads_per_rank(g, par.tp)));
  add_o_proj(out, t, m.hidden, h * g.head_dim, attn_f, src_gqa, o_proj_reduce);
  add_a1_tail(out, m, t, moe_layer);
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

StepShape attention_a0_key(const StepShape& s)
{
  StepShape key;
  key.phase  = s.phase;
  key.tokens = s.tokens;
  if (s.phase == Phase::decode)
    return key;
  // MLA's kv_b_proj up-projects the prompt part's context (prompt requests x their mean KV length), when it has one
  const StepShape prompts = prompt_part(s);
  key.batch               = prompts.batch;
  key.context_len         = prompts.context_len;
  key.decode_batch        = has_prompt_requests(s) ? 0 : 1; // marks a step with no prompt part
  return key;
}

StepShape attention_a0_shared_key(const StepShape& s)
{
  StepShape key   = attention_a0_key(s);
  key.batch       = 0; // the prompt part's context: kv_b_proj's, a context kernel
  key.context_len = 0;
  return key;
}

std::vector<KernelWork> a0_context_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  if (m.attention == AttentionKind::mla && s.phase == Phase::prefill && has_prompt_requests(s))
    return {mla_kv_b_proj(m, par, s)};
  return {};
}

StepShape attention_a1_shared_key(const StepShape& s)
{
  // What the other kernels read: the step's tokens (o_proj, the router); which context kernels run: whether there is a
  // decode part and a prompt part.
  StepShape key;
  key.phase  = s.phase;
  key.tokens = s.tokens;
  if (s.phase == Phase::decode)
    return key;
  key.decode_batch = s.decode_tokens > 0 ? 1 : 0;
  key.batch        = has_prompt_requests(s) ? 1 : 0;
  return key;
}

std::vector<KernelWork> a1_context_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  if (m.attention != AttentionKind::mla) // as attention_a1_kernels chooses
    return {gqa_attention_core(m, par, s, heads_per_rank(m.gqa.num_heads, par.tp), kv_heads_per_rank(m.gqa, par.tp))};
  if (s.phase == Phase::decode) // its absorbed products read the tokens alone (the key): FlashMLA's call is timed again
    return {mla_decode_core(m, heads_per_rank(m.mla.num_heads, par.tp), s)};
  std::vector<KernelWork> out;
  out.reserve(4); // a mixed step's: the decode part's three, the prompt part's one
  add_mla_attention(out, m, par, s);
  return out;
}

std::vector<KernelWork> attention_a1_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s,
                                             bool moe_layer, const KernelWork* o_proj_reduce)
{
  return m.attention == AttentionKind::mla ? mla_a1(m, par, s, moe_layer, o_proj_reduce)
                                           : gqa_a1(m, par, s, moe_layer, o_proj_reduce);
}

} // namespace dbosim::models

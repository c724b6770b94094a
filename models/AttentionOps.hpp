/* dbosim — the kernels of the attention ops A0 (input projections) and A1 (core attention + o_proj + router)
 * for MLA (DeepSeek-V2/V3, Kimi-K2) and GQA (Qwen3-MoE, Mixtral), per rank, heads divided by tp. */
#pragma once
#include "models/KernelCost.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

#include <vector>

namespace dbosim::models {

/** @brief A0: input RMSNorm, q/kv down-projections (+ latent norms), q up-projection, kv_b up-projection of the
 *  context in prefill (MLA, not absorbed), RoPE + KV-cache write. GQA: RMSNorm, fused qkv_proj, RoPE + cache. */
std::vector<KernelWork> attention_a0_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s);
/** @brief The part of `s` that attention_a0_kernels reads: a decode-phase shape's A0 (norm, projections, rotary, KV
 *  write) is a function of its tokens alone; a prefill-phase shape's up-projects its prompt part's context. Shapes
 *  with equal keys have equal A0 kernels (a memo's key). */
StepShape attention_a0_key(const StepShape& s);

/** @brief A1: core attention over the KV cache (decode: each request reads its context; prefill: causal attention
 *  of the new tokens over each request's context, PrefillAttention.hpp), MLA's absorbed W_UK / W_UV per-head products
 * in decode, o_proj, and on MoE layers the router gate GEMM and its top-k. */
/** `o_proj_reduce`, where given (tensor parallelism: the all-reduce of o_proj's output, CommOps), is launched right
 *  after o_proj. */
std::vector<KernelWork> attention_a1_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s,
                                             bool moe_layer, const KernelWork* o_proj_reduce = nullptr);

/** @brief Query-key pairs a causal attention step computes: each request has tokens/batch new queries at the end of
 *  a context of context_len keys; query i of q sees context_len - q + i + 1 keys. */
double causal_pairs(const StepShape& s);

} // namespace dbosim::models

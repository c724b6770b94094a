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
 *  write) is a function of its tokens alone; a prefill-phase shape's also up-projects its prompt part's context (the
 *  prompt requests, their mean KV length, whether there is a prompt part). Shapes with equal keys have equal A0
 *  kernels (a memo's key). */
StepShape attention_a0_key(const StepShape& s);

/** @brief A1: core attention over the KV cache (decode: each request reads its context; prefill: causal attention
 *  of the new tokens over each request's context, PrefillAttention.hpp), MLA's absorbed W_UK / W_UV per-head products
 * in decode, o_proj, and on MoE layers the router gate GEMM and its top-k. */
/** `o_proj_reduce`, where given (tensor parallelism: the all-reduce of o_proj's output, CommOps), is launched right
 *  after o_proj. */
std::vector<KernelWork> attention_a1_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s,
                                             bool moe_layer, const KernelWork* o_proj_reduce = nullptr);

/** @brief What A0's kernels but its context kernels (a0_context_kernels) read: attention_a0_key less the prompt
 *  part's context. A ContextOpMemo key. */
StepShape attention_a0_shared_key(const StepShape& s);
/** @brief A0's kernels that read a prompt's context at `s`: MLA prefill's kv_b_proj up-projection (none otherwise). */
std::vector<KernelWork> a0_context_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s);

/** @brief What A1's kernels but its context kernels (a1_context_kernels) read, and which of those run: the tokens,
 *  and in a prefill-phase shape whether it has a decode part and a prompt part. A ContextOpMemo key. */
StepShape attention_a1_shared_key(const StepShape& s);
/** @brief A1's kernels that read the KV cache or a prompt's context at `s`, in launch order: a decode-phase MLA
 *  shape's FlashMLA call; in a prefill-phase MLA shape its attention kernels (the decoding requests' absorbed products
 *  and FlashMLA's call, then the prompt part's attention); GQA's one attention kernel. */
std::vector<KernelWork> a1_context_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s);

/** @brief Query-key pairs a causal attention step computes: each request has tokens/batch new queries at the end of
 *  a context of context_len keys; query i of q sees context_len - q + i + 1 keys. */
double causal_pairs(const StepShape& s);

} // namespace dbosim::models

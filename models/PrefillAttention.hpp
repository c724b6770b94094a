/* dbosim — prefill attention over a context: each request brings q new tokens at the end of a context of
 * `context_len` keys (its earlier chunks, or the other micro-batch's half of its prompt), under a causal mask aligned
 * bottom-right: new query i (0-based) sees context_len - q + i + 1 keys.
 *
 * The measured attention_prefill table times a causal self-attention of x tokens (x(x+1)/2 query-key pairs). A
 * kernel with P pairs is timed at the point of the table with the same pairs, x = equal_pairs_tokens(P): a flash
 * attention kernel's work is its pairs, and the table's achieved pair rate at that work is the one it runs at.
 *  - context == q, one request: x = q, the table's own point (the value before context was modelled);
 *  - a 4096-token chunk at context 32768 has 15.0x the pairs of a 4096-token prompt: it is timed at x ~ 15.9k;
 *  - between two points of the table the time is linear in the pairs, above its last point it grows with the
 *    pairs at the last point's pair rate (causal_table_us);
 *  - the result is never below the kernel's roofline (its FLOPs at its dtype's peak x efficiency.attention, its
 *    bytes, which include reading the context's K/V, at HBM x efficiency.memory). */
#pragma once
#include "hw/HwProfile.hpp"
#include "models/KernelCost.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"
#include "models/OpTables.hpp"

namespace dbosim::models {

/** @brief Query-key pairs of a causal self-attention of `tokens` tokens: tokens (tokens + 1) / 2. */
double self_attention_pairs(double tokens);

/** @brief The length x >= 0 of the causal self-attention with `pairs` query-key pairs (x (x + 1) / 2 = pairs);
 *  exact for the pairs of an integer length. */
double equal_pairs_tokens(double pairs);

/** @brief Duration in microseconds at `tokens` of a table whose axis is a causal self-attention length, with time
 *  taken as a function of the work (pairs) rather than the length: at a point, its time; between two points, linear
 *  in the pairs; below the first, the first point's time (as table_us); above the last, the last point's pair rate
 *  (us_last * pairs(tokens) / pairs(last)).
 *  @throws std::invalid_argument on an empty or non-increasing curve or a negative `tokens`. */
double causal_table_us(const Curve& curve, double tokens, TableLookup* how = nullptr);

/** @brief The core attention kernel of a prefill step on one rank (`s.phase` prefill): MLA un-absorbed (per-head
 *  K = [K_nope up-projected from the latent, shared rotary key], V up-projected; d_qk = qk_nope + qk_rope, d_v =
 *  v_head_dim) or GQA (d_qk = d_v = head_dim). FLOPs 2 h (d_qk + d_v) causal_pairs(s); bytes: the new tokens' Q and
 *  output and the K/V of every request's context (MLA: per head, bf16, as kv_b_proj wrote them; GQA: the cache's
 *  kv heads in kv_dtype). Table family attention_prefill, dims {heads, head_dim: d_qk}, axis the equal-pairs length
 *  (TableAxis::causal_tokens). Heads are divided by par.tp. */
KernelWork prefill_attention_kernel(const ModelSpec& m, const ParallelSpec& par, const StepShape& s);

/** @brief Test and calibration hook: the prefill attention kernel's time for `batch` requests of `new_tokens` new
 *  tokens each over `context_len` keys, on the whole GPU of `hw`, as the op costs use it.
 *  @throws std::invalid_argument as kernel_time. */
KernelTime prefill_attention_time(const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par, int new_tokens,
                                  int context_len, int batch = 1);

} // namespace dbosim::models

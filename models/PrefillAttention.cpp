#include "models/PrefillAttention.hpp"

#include "models/AttentionOps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dbosim::models {
namespace {
constexpr double act_bytes = 2.0; // bf16 queries, outputs and (MLA) the up-projected K/V
} // namespace

double self_attention_pairs(double tokens) { return tokens * (tokens + 1) / 2; }

double equal_pairs_tokens(double pairs)
{
  if (!(pairs > 0))
    return 0;
  // x^2 + x - 2 pairs = 0; for pairs = q (q + 1) / 2, 1 + 8 pairs = (2q + 1)^2 exactly, so x = q exactly.
  return (std::sqrt(1 + 8 * pairs) - 1) / 2;
}

double causal_table_us(const Curve& curve, double tokens, TableLookup* how)
{
  TableLookup h   = TableLookup::exact;
  const double us = table_us(curve, tokens, &h); // checks the curve and the tokens; the clamp below the table
  if (how)
    *how = h;
  if (h == TableLookup::exact || h == TableLookup::clamped)
    return us;
  if (h == TableLookup::extrapolated)
    return curve.y.back() * self_attention_pairs(tokens) / self_attention_pairs(curve.x.back());
  // Between two points: linear in the pairs (the work), not in the length.
  std::size_t i = 0;
  while (curve.x[i + 1] < tokens)
    ++i;
  const double p0 = self_attention_pairs(curve.x[i]), p1 = self_attention_pairs(curve.x[i + 1]);
  return curve.y[i] + (self_attention_pairs(tokens) - p0) / (p1 - p0) * (curve.y[i + 1] - curve.y[i]);
}

KernelWork prefill_attention_kernel(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  if (par.tp < 1)
    throw std::invalid_argument(fmt::format("prefill attention: tp={} must be >= 1", par.tp));
  KernelWork k;
  k.name          = "attention_prefill";
  k.efficiency    = Efficiency::attention;
  k.compute_dtype = DType::bf16;
  k.table_family  = "attention_prefill";
  k.table_axis    = TableAxis::causal_tokens;
  // A mixed step's decoding requests ride in the same varlen call (one query token each over its whole KV).
  const StepShape prompts = prompt_part(s), decodes = decode_part(s);
  const double pairs      = causal_pairs(prompts) + causal_pairs(decodes);
  const double new_tokens = s.tokens;
  const double ctx_tokens = double(prompts.batch) * prompts.context_len +
                            double(decodes.batch) * decodes.context_len; // keys read, over every request
  k.table_tokens = equal_pairs_tokens(pairs);
  if (m.attention == AttentionKind::mla) {
    const MlaSpec& a = m.mla;
    const int h      = a.num_heads / par.tp;
    const int d_qk   = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const int d_v    = a.v_head_dim;
    k.table_dims     = {{"heads", h}, {"head_dim", d_qk}};
    if (s.tokens > 0) {
      k.flops = 2.0 * h * (d_qk + d_v) * pairs;
      // Q in and O out for the new tokens; every context key's per-head K and V as kv_b_proj wrote them (bf16).
      k.bytes = new_tokens * h * (d_qk + d_v) * act_bytes + ctx_tokens * h * (d_qk + d_v) * act_bytes;
    }
  } else {
    const GqaSpec& g = m.gqa;
    const int h      = g.num_heads / par.tp;
    const int kvh    = std::max(1, g.num_kv_heads / par.tp);
    k.table_dims     = {{"heads", h}, {"head_dim", g.head_dim}};
    if (s.tokens > 0) {
      k.flops = 2.0 * h * 2.0 * g.head_dim * pairs; // QK^T and PV
      // Q in and O out for the new tokens; the context's K and V from the cache (kv heads, kv_dtype).
      k.bytes =
          new_tokens * h * g.head_dim * 2 * act_bytes + ctx_tokens * 2.0 * kvh * g.head_dim * dtype_bytes(m.kv_dtype);
    }
  }
  return k;
}

KernelTime prefill_attention_time(const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par, int new_tokens,
                                  int context_len, int batch)
{
  StepShape s;
  s.phase       = Phase::prefill;
  s.tokens      = new_tokens * batch;
  s.batch       = batch;
  s.context_len = context_len;
  if (new_tokens < 0 || batch < 0 || context_len < new_tokens)
    throw std::invalid_argument(
        fmt::format("prefill attention: {} new tokens x {} requests over {} keys", new_tokens, batch, context_len));
  return kernel_time(hw, prefill_attention_kernel(m, par, s));
}

} // namespace dbosim::models

/* dbosim — one layer's op costs: each op is a list of kernels (AttentionOps, FfnOps), each kernel costed by a
 * measured table or the roofline (KernelCost); D and C by models/All2AllModel through CommOps. */
#include "models/OpCost.hpp"

#include "models/AttentionOps.hpp"
#include "models/CommOps.hpp"
#include "models/CostExplain.hpp"
#include "models/FfnOps.hpp"
#include "models/KernelCost.hpp"
#include "models/OpMemo.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dbosim::models {

std::string op_name(OpKind k)
{
  switch (k) {
  case OpKind::A0:
    return "A0";
  case OpKind::A1:
    return "A1";
  case OpKind::D:
    return "D";
  case OpKind::MLP:
    return "MLP";
  case OpKind::S:
    return "S";
  case OpKind::C:
    return "C";
  case OpKind::D_recv:
    return "D_recv";
  case OpKind::C_recv:
    return "C_recv";
  }
  return "?";
}

std::string bound_name(Bound b)
{
  switch (b) {
  case Bound::compute:
    return "compute";
  case Bound::memory:
    return "memory";
  case Bound::table:
    return "table";
  case Bound::network:
    return "network";
  }
  return "?";
}

std::string backend_name(All2AllBackend b) { return all2all_traits_of(b).name; }

StepShape prompt_part(const StepShape& s)
{
  StepShape p          = s;
  p.tokens             = s.tokens - s.decode_tokens;
  p.batch              = s.batch - s.decode_batch;
  p.decode_tokens      = 0;
  p.decode_batch       = 0;
  p.decode_context_len = 0;
  return p;
}

StepShape decode_part(const StepShape& s)
{
  StepShape d;
  d.phase       = Phase::decode;
  d.tokens      = s.decode_tokens;
  d.batch       = s.decode_batch;
  d.context_len = s.decode_context_len;
  return d;
}

const OpCost* LayerCosts::find(OpKind k) const
{
  for (const auto& op : ops)
    if (op.kind == k)
      return &op;
  return nullptr;
}

namespace {
[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("layer_costs: " + what); }

/** A mixed step's decode part: inside the step (the prompt part keeps at least a token per prompt request; a DP rank
 *  with only decoding requests in a mixed step has a prompt part of padding alone), at least one token per decoding
 *  request, each request's KV at least its new tokens. */
void check_decode_part(const StepShape& s)
{
  const StepShape d = decode_part(s);
  if (s.phase != Phase::prefill)
    bad("a decode part (decode_tokens/decode_batch/decode_context_len) belongs to a mixed (prefill-phase) step");
  if (d.batch < 1 || d.batch > s.batch || d.tokens < d.batch || d.tokens > s.tokens ||
      s.tokens - d.tokens < s.batch - d.batch)
    bad(fmt::format("decode part of {} tokens x {} requests does not fit a step of {} tokens x {} requests", d.tokens,
                    d.batch, s.tokens, s.batch));
  if (double(d.context_len) < double(d.tokens) / d.batch)
    bad(fmt::format("decode_context_len={} is shorter than the {} new tokens per decoding request", d.context_len,
                    double(d.tokens) / d.batch));
}

void check_inputs(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, bool moe_layer, int redundant)
{
  if (par.tp < 1 || par.ep < 1 || par.dp < 1)
    bad(fmt::format("parallel sizes must be >= 1 (dp={}, ep={}, tp={})", par.dp, par.ep, par.tp));
  const int heads = m.attention == AttentionKind::mla ? m.mla.num_heads : m.gqa.num_heads;
  if (heads <= 0 || heads % par.tp != 0)
    bad(fmt::format("{} attention heads do not divide over tp={}", heads, par.tp));
  if (s.tokens < 0 || s.batch < 0 || s.context_len < 0)
    bad(fmt::format("negative shape (tokens={}, batch={}, context_len={})", s.tokens, s.batch, s.context_len));
  if (s.tokens > 0 && (s.batch < 1 || s.batch > s.tokens))
    bad(fmt::format("batch={} must be in 1..tokens={}", s.batch, s.tokens));
  if (s.decode_tokens != 0 || s.decode_batch != 0 || s.decode_context_len != 0)
    check_decode_part(s);
  const StepShape p = prompt_part(s);
  if (p.tokens > 0 && p.batch > 0 && double(p.context_len) < double(p.tokens) / p.batch)
    bad(fmt::format("context_len={} is shorter than the {} new tokens per request", p.context_len,
                    double(p.tokens) / p.batch));
  if (!moe_layer) {
    if (m.dense_intermediate <= 0 || m.dense_intermediate % par.tp != 0)
      bad(fmt::format("dense_intermediate={} does not divide over tp={}", m.dense_intermediate, par.tp));
    return;
  }
  if (m.num_routed_experts <= 0 || m.top_k <= 0 || m.top_k > m.num_routed_experts)
    bad(fmt::format("top_k={} must be in 1..routed experts={}", m.top_k, m.num_routed_experts));
  if (par.ep > 1 && (m.num_routed_experts + redundant) % par.ep != 0)
    bad(fmt::format("{} routed experts (+{} redundant) do not divide over ep={}", m.num_routed_experts, redundant,
                    par.ep));
  if (par.ep > 1 && par.ep % par.tp != 0)
    bad(fmt::format("ep={} is not a multiple of tp={}", par.ep, par.tp));
  if (par.ep <= 1 && m.moe_intermediate % par.tp != 0)
    bad(fmt::format("expert width {} does not divide over tp={}", m.moe_intermediate, par.tp));
  if (m.num_shared_experts > 0 && m.shared_intermediate % par.tp != 0)
    bad(fmt::format("shared expert width {} does not divide over tp={}", m.shared_intermediate, par.tp));
}

} // namespace

namespace {
/** Adds one kernel to its op's sums, in launch order (`longest_us`: the longest kernel so far, -1 before the first):
 *  the one place an op's duration, flops, bytes and bound are summed. */
void add_kernel_sums(OpCost& c, double& longest_us, const KernelSums& k)
{
  c.flops += k.flops;
  c.bytes += k.bytes;
  c.weight_bytes += k.weight_bytes;
  c.duration_us += k.us;
  // The op is reported with the bound of the kernel that takes most of its time.
  if (k.us > longest_us) {
    longest_us = k.us;
    c.bound    = k.bound;
  }
}

/** The launches of `kernels` (OpCost::kernels, launch_split) into `c`. */
void add_launches(OpCost& c, const std::vector<KernelWork>& kernels)
{
  for (const auto& k : kernels) {
    c.kernels += std::max(1, k.launches);
    c.launch_split.insert(c.launch_split.end(), std::max(1, k.launches), k.split);
  }
}
} // namespace

OpCost sum_kernels(const HwProfile& hw, OpKind kind, const std::string& sm_family, std::vector<KernelWork> kernels)
{
  OpCost c;
  c.kind      = kind;
  c.sm_family = sm_family;
  c.kernels   = 0;
  add_launches(c, kernels);
  c.parts.reserve(kernels.size());
  double longest_us  = -1;
  const bool explain = cost_explanations();
  for (auto& k : kernels) {
    KernelTime t = kernel_time(hw, k);
    add_kernel_sums(c, longest_us, {t.us, k.flops, k.bytes, k.weight_bytes, t.bound});
    if (explain)
      c.method += (c.method.empty() ? "" : "; ") + t.method;
    // Last: the kernel's strings and dims move into its part (kernel_time has read them).
    if (explain)
      c.parts.push_back({t.us, std::move(k.table_family), std::move(k.table_dims), k.table_tokens, std::move(k.name),
                         std::move(k.shape), std::move(k.source), std::move(k.floor_family), t.floored,
                         std::move(t.table), k.flops, k.compute_dtype});
    else // what the SM-scaling model reads; no names (models/CostExplain)
      c.parts.push_back({t.us,
                         std::move(k.table_family),
                         std::move(k.table_dims),
                         k.table_tokens,
                         {},
                         {},
                         {},
                         std::move(k.floor_family),
                         t.floored,
                         std::move(t.table),
                         k.flops,
                         k.compute_dtype});
    c.parts.back().on_links = k.fabric_us >= 0;
  }
  if (explain)
    c.method = fmt::format("{} = sum of {} kernels ({:.3f} us): {}", op_name(kind), c.kernels, c.duration_us, c.method);
  return c;
}

namespace {
/** Kernels vLLM runs inside its fused-MoE custom op (FusedMoE.forward -> moe_forward / moe_forward_shared). */
std::vector<KernelWork> inside_moe_op(std::vector<KernelWork> kernels)
{
  for (KernelWork& k : kernels)
    k.split = GraphSplit::moe;
  return kernels;
}
} // namespace

OpCost routed_mlp_cost(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                       int redundant_experts, double load)
{
  return sum_kernels(hw, OpKind::MLP, "grouped_gemm",
                     inside_moe_op(routed_mlp_kernels(model, par, shape, redundant_experts, load)));
}

namespace {
/** The MoE DP chunks of a step: vLLM loops over the largest DP rank's tokens (the shape's, padded) in chunks of
 *  `chunk`, the last one the remainder. One entry: no loop. */
std::vector<StepShape> dp_chunks(const StepShape& shape, int chunk)
{
  if (chunk <= 0 || shape.tokens <= chunk)
    return {shape};
  std::vector<StepShape> out;
  for (int start = 0; start < shape.tokens; start += chunk) {
    StepShape c = prompt_part(shape); // a chunk prices the MoE ops alone: tokens and requests, no attention parts
    c.tokens    = std::min(chunk, shape.tokens - start);
    c.batch     = std::max(1, int(std::lround(double(shape.batch) * c.tokens / shape.tokens)));
    out.push_back(c);
  }
  return out;
}

/** One op run once per chunk, in order: its time, work and launches summed. Every chunk but the last has the same
 *  shape: a chunk equal to the one before it is priced once and added again (the same additions in the same order,
 *  so the sums are the chunk-by-chunk ones to the bit; `parts` keeps one entry per kernel of every chunk). */
template <typename CostOf> OpCost per_chunk(const std::vector<StepShape>& chunks, CostOf cost_of)
{
  OpCost sum = cost_of(chunks.front());
  if (chunks.size() == 1)
    return sum;
  OpCost priced = sum; // the cost of chunks[i - 1]
  for (std::size_t i = 1; i < chunks.size(); ++i) {
    if (!(chunks[i] == chunks[i - 1]))
      priced = cost_of(chunks[i]);
    const OpCost& c = priced;
    sum.flops += c.flops;
    sum.bytes += c.bytes;
    sum.weight_bytes += c.weight_bytes;
    sum.duration_us += c.duration_us;
    sum.kernels += c.kernels;
    sum.recv_us += c.recv_us;
    sum.parts.insert(sum.parts.end(), c.parts.begin(), c.parts.end());
    sum.launch_split.insert(sum.launch_split.end(), c.launch_split.begin(), c.launch_split.end());
  }
  if (chunks.size() > 1)
    sum.method += fmt::format(" (summed over {} MoE DP chunks)", chunks.size());
  return sum;
}
} // namespace

namespace {
constexpr const char* src_row_parallel =
    "vllm/model_executor/layers/linear.py: RowParallelLinear.forward (tensor_model_parallel_all_reduce)";
constexpr const char* src_moe_reduce =
    "vllm/model_executor/layers/fused_moe/layer.py: FusedMoE.forward (reduce_results: the experts' sum all-reduced)";

} // namespace

namespace {
/** A1's kernels with, under tensor parallelism, the all-reduce of o_proj's output. */
std::vector<KernelWork> a1_kernels(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par,
                                   const StepShape& shape, bool moe_layer, const CommSetup& comm)
{
  if (par.tp <= 1)
    return attention_a1_kernels(model, par, shape, moe_layer);
  const KernelWork reduce =
      tp_all_reduce_kernel("o_proj_all_reduce", shape.tokens, model, hw, par, comm, src_row_parallel);
  return attention_a1_kernels(model, par, shape, moe_layer, &reduce);
}
} // namespace

OpCost attention_a1_cost(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                         bool moe_layer, const CommSetup& comm)
{
  return sum_kernels(hw, OpKind::A1, "attention", a1_kernels(model, hw, par, shape, moe_layer, comm));
}

TimedKernels time_kernels(const HwProfile& hw, std::vector<KernelWork> kernels)
{
  TimedKernels out;
  out.sums.reserve(kernels.size());
  for (const KernelWork& k : kernels) {
    const KernelTime t = kernel_time(hw, k);
    out.sums.push_back({t.us, k.flops, k.bytes, k.weight_bytes, t.bound});
  }
  out.kernels = std::move(kernels);
  return out;
}

void add_context_positions(const std::vector<KernelWork>& context, const std::vector<KernelWork>& kernels,
                           std::size_t first, const std::string& what, std::vector<std::size_t>& out)
{
  for (const KernelWork& c : context) {
    const auto named = [&c](const KernelWork& k) { return k.name == c.name; };
    const auto at    = std::find_if(kernels.begin(), kernels.end(), named);
    if (at == kernels.end() || std::count_if(kernels.begin(), kernels.end(), named) != 1)
      throw InternalError(fmt::format("{}: context kernel {} is not named once in its kernels", what, c.name));
    out.push_back(first + static_cast<std::size_t>(at - kernels.begin()));
  }
}

OpCost ContextOpMemo::cost(const HwProfile& hw, OpKind kind, const std::string& sm_family,
                           const std::pair<StepShape, bool>& key, const std::vector<KernelWork>& context,
                           const std::function<std::vector<KernelWork>()>& kernels)
{
  return cost_timed(hw, kind, sm_family, key, time_kernels(hw, context), kernels);
}

OpCost ContextOpMemo::cost_timed(const HwProfile& hw, OpKind kind, const std::string& sm_family,
                                 const std::pair<StepShape, bool>& key, const TimedKernels& context,
                                 const std::function<std::vector<KernelWork>()>& kernels)
{
  auto at = entries_.find(key);
  if (at == entries_.end()) {
    Entry e;
    const std::vector<KernelWork> all = kernels();
    for (const KernelWork& k : all) {
      const KernelTime t = kernel_time(hw, k);
      e.kernels.push_back({t.us, k.flops, k.bytes, k.weight_bytes, t.bound});
    }
    add_context_positions(context.kernels, all, 0, op_name(kind), e.context);
    e.launches.kind      = kind;
    e.launches.sm_family = sm_family;
    e.launches.kernels   = 0;
    add_launches(e.launches, all);
    at = entries_.emplace(key, std::move(e)).first;
  }
  const Entry& e = at->second;
  if (e.context.size() != context.sums.size())
    throw InternalError(fmt::format("{}: {} context kernels where its key had {}", op_name(kind), context.sums.size(),
                                    e.context.size()));
  OpCost c       = e.launches;
  double longest = -1;
  for (std::size_t i = 0; i < e.kernels.size(); ++i) {
    const auto here = std::find(e.context.begin(), e.context.end(), i);
    add_kernel_sums(c, longest,
                    here == e.context.end() ? e.kernels[i]
                                            : context.sums[static_cast<std::size_t>(here - e.context.begin())]);
  }
  return c;
}

const TimedKernels& AttentionMemo::context_at(LastContext& last, const HwProfile& hw, const StepShape& shape,
                                              const std::function<std::vector<KernelWork>()>& context)
{
  if (!last.set || !(last.shape == shape)) {
    last.context = time_kernels(hw, context());
    last.shape   = shape;
    last.set     = true;
  }
  return last.context;
}

OpCost AttentionMemo::a0(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape)
{
  return a0_.cost_timed(hw, OpKind::A0, "gemm", {attention_a0_shared_key(shape), false},
                        context_at(a0_last_, hw, shape, [&] { return a0_context_kernels(model, par, shape); }),
                        [&] { return attention_a0_kernels(model, par, shape); });
}

OpCost AttentionMemo::a1(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                         bool moe_layer, const CommSetup& comm)
{
  return a1_.cost_timed(hw, OpKind::A1, "attention", {attention_a1_shared_key(shape), moe_layer},
                        context_at(a1_last_, hw, shape, [&] { return a1_context_kernels(model, par, shape); }),
                        [&] { return a1_kernels(model, hw, par, shape, moe_layer, comm); });
}

namespace {

/** The ops of a MoE layer after attention (D, MLP, S, C) appended to `out`, with its hot_rank_load and straggler_us:
 *  they read the shape's tokens alone. With `memo`, each chunk's all-to-all and routed experts come from it. */
void add_moe_ops(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                 const CommSetup& comm, LayerCosts& out, MoeOpsMemo* memo = nullptr)
{
  // With ep = 1 every expert is local: no all-to-all happens, so D and C are absent.
  const bool all_to_all = par.ep > 1;
  const int redundant   = comm.routing.redundant_experts;
  // The busiest rank under the post-EPLB residual: its share of the mean copies per rank (the balanced rows).
  const double slots_per_rank = static_cast<double>(model.num_routed_experts + redundant) / par.ep;
  out.hot_rank_load =
      hot_rank_load(comm.expert_load, par.ep, expert_load(model, par, shape, redundant).rows, slots_per_rank);
  CommSetup hot             = comm;
  hot.routing.hot_rank_load = out.hot_rank_load;
  const bool skewed         = out.hot_rank_load != 1.0;
  auto excess               = [&](const OpCost& busiest, const OpCost& mean) {
    out.straggler_us += std::max(0.0, busiest.duration_us - mean.duration_us);
  };
  // vLLM's MoE DP chunk loop exists for the masked-buffer backends (their buffer holds one chunk per rank).
  const std::vector<StepShape> chunks =
      dp_chunks(shape, all_to_all && all2all_traits_of(par.backend).masked_expert_input ? comm.moe_dp_chunk_tokens : 0);
  auto a2a = [&](OpKind k, const CommSetup& c) {
    return per_chunk(chunks, [&](const StepShape& s) {
      if (!memo)
        return all_to_all_cost(k, model, hw, par, s, c);
      const auto key = std::make_tuple(k, s.tokens, c.routing.hot_rank_load);
      auto at        = memo->all_to_all.find(key);
      if (at == memo->all_to_all.end())
        at = memo->all_to_all.emplace(key, all_to_all_cost(k, model, hw, par, s, c)).first;
      return at->second;
    });
  };
  // With ep = 1 and tp > 1 each rank holds a slice of every expert (and of the shared expert): FusedMoE sums their
  // partial outputs with one all-reduce over the TP group, after the experts (here at the end of MLP).
  const bool tp_sharded_moe = !all_to_all && par.tp > 1;
  auto chunk_mlp            = [&](const StepShape& s, double load) {
    if (!tp_sharded_moe)
      return routed_mlp_cost(model, hw, par, s, redundant, load);
    std::vector<KernelWork> k = inside_moe_op(routed_mlp_kernels(model, par, s, redundant, load));
    k.push_back(inside(tp_all_reduce_kernel("moe_all_reduce", s.tokens, model, hw, par, comm, src_moe_reduce),
                                  GraphSplit::moe));
    return sum_kernels(hw, OpKind::MLP, "grouped_gemm", std::move(k));
  };
  auto mlp = [&](double load) {
    return per_chunk(chunks, [&](const StepShape& s) {
      if (!memo)
        return chunk_mlp(s, load);
      const auto key = std::make_pair(s.tokens, load);
      auto at        = memo->mlp.find(key);
      if (at == memo->mlp.end())
        at = memo->mlp.emplace(key, chunk_mlp(s, load)).first;
      return at->second;
    });
  };
  if (all_to_all) {
    out.ops.push_back(a2a(OpKind::D, hot));
    if (skewed)
      excess(out.ops.back(), a2a(OpKind::D, comm));
  }
  out.ops.push_back(mlp(out.hot_rank_load));
  if (skewed)
    excess(out.ops.back(), mlp(1.0));
  if (model.num_shared_experts > 0)
    out.ops.push_back(
        sum_kernels(hw, OpKind::S, "gemm",
                    inside_moe_op(dense_mlp_kernels("shared_expert", model, par, shape, model.shared_intermediate,
                                                    OpClass::shared_experts))));
  if (all_to_all) {
    out.ops.push_back(a2a(OpKind::C, hot));
    if (skewed)
      excess(out.ops.back(), a2a(OpKind::C, comm));
  }
}

/** layer_costs, with a MoE layer's ops after attention from `memo` when there is one. */
LayerCosts layer_costs_kept(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par,
                            const StepShape& shape, bool moe_layer, const CommSetup& comm, MoeOpsMemo* memo)
{
  check_inputs(model, par, shape, moe_layer, comm.routing.redundant_experts);
  LayerCosts out;
  out.moe = moe_layer;
  out.ops.push_back(sum_kernels(hw, OpKind::A0, "gemm", attention_a0_kernels(model, par, shape)));
  out.ops.push_back(attention_a1_cost(model, hw, par, shape, moe_layer, comm));
  if (!moe_layer) {
    std::vector<KernelWork> ffn = dense_mlp_kernels("dense_mlp", model, par, shape, model.dense_intermediate);
    if (par.tp > 1)
      ffn.push_back(tp_all_reduce_kernel("dense_mlp_all_reduce", shape.tokens, model, hw, par, comm, src_row_parallel));
    out.ops.push_back(sum_kernels(hw, OpKind::MLP, "gemm", std::move(ffn)));
    return out;
  }
  if (!memo) {
    add_moe_ops(model, hw, par, shape, comm, out);
    return out;
  }
  auto at = memo->by_tokens.find(shape.tokens);
  if (at == memo->by_tokens.end()) {
    LayerCosts moe;
    add_moe_ops(model, hw, par, shape, comm, moe, memo);
    at = memo->by_tokens.emplace(shape.tokens, std::move(moe)).first;
  }
  out.ops.insert(out.ops.end(), at->second.ops.begin(), at->second.ops.end());
  out.hot_rank_load = at->second.hot_rank_load;
  out.straggler_us  = at->second.straggler_us;
  return out;
}

} // namespace

LayerCosts layer_costs(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                       bool moe_layer, const CommSetup& comm)
{
  return layer_costs_kept(model, hw, par, shape, moe_layer, comm, nullptr);
}

LayerCosts layer_costs(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                       const CommSetup& comm, MoeOpsMemo& memo)
{
  return layer_costs_kept(model, hw, par, shape, true, comm, &memo);
}

} // namespace dbosim::models

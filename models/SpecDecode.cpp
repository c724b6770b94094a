/* dbosim — DeepSeek MTP speculative decoding: accepted tokens in closed form and the draft module's cost. */
#include "models/SpecDecode.hpp"

#include "base/InputError.hpp"
#include "models/AttentionOps.hpp"
#include "models/CostGuards.hpp"
#include "models/KernelCost.hpp"
#include "models/OpMemo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace dbosim::models {

std::string spec_method_name(SpecMethod m)
{
  switch (m) {
  case SpecMethod::none:
    return "none";
  case SpecMethod::deepseek_mtp:
    return "deepseek_mtp";
  }
  return "?";
}

double SpecDecodeSpec::acceptance(int i) const
{
  if (acceptance_rate.empty() || i < 1)
    return 0;
  if (acceptance_rate.size() == 1)
    return acceptance_rate.front();
  return acceptance_rate[static_cast<std::size_t>(std::min<int>(i, static_cast<int>(acceptance_rate.size())) - 1)];
}

double expected_accepted_tokens(const SpecDecodeSpec& spec)
{
  if (!spec.enabled())
    return 1;
  // Draft i counts only when every draft before it was accepted: P(i accepted) = a_1 a_2 ... a_i.
  double expected = 1, p_prefix = 1;
  for (int i = 1; i <= spec.num_speculative_tokens; ++i) {
    p_prefix *= spec.acceptance(i);
    expected += p_prefix;
  }
  return expected;
}

std::vector<StepShape> draft_pass_shapes(const SpecDecodeSpec& spec, const StepShape& target)
{
  std::vector<StepShape> out;
  if (!spec.enabled() || target.tokens <= 0)
    return out;
  // vLLM's EagleProposer.propose: the first pass runs over every token the target ran (input ids shifted by one,
  // the target's hidden states), logits on each request's last row; the later k - 1 passes feed one draft token
  // per request (max_query_len 1), the KV length one further each time.
  out.push_back(target);
  for (int i = 2; i <= spec.num_speculative_tokens; ++i) {
    StepShape s;
    s.phase       = Phase::decode;
    s.tokens      = target.batch;
    s.batch       = target.batch;
    s.context_len = target.context_len + (i - 1);
    out.push_back(s);
  }
  return out;
}

namespace {

/** The kernels around the MTP block that run after it on one row per request: they read the pass's requests alone. */
void add_head_row_kernels(std::vector<KernelWork>& k, const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const double rows        = s.batch;
  const int vocab_per_rank = (m.vocab + par.tp - 1) / par.tp; // ParallelLMHead: vocab split over TP
  k.push_back(streaming_kernel("mtp_shared_head_norm", rows, m.hidden, 1, 1, "rmsnorm"));
  k.push_back(gemm_kernel("mtp_lm_head", rows, vocab_per_rank, m.hidden, linear_format(m, OpClass::lm_head)));
  k.push_back(streaming_kernel("mtp_argmax", rows, vocab_per_rank, 1, 0, ""));
}

/** The kernels around the MTP block: before it over every token of the pass, after it on one row per request
 *  (add_head_row_kernels, last). */
std::vector<KernelWork> head_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  const double t = s.tokens;
  std::vector<KernelWork> k;
  k.push_back(streaming_kernel("mtp_embedding", t, m.hidden, 1, 1, ""));
  k.push_back(streaming_kernel("mtp_enorm", t, m.hidden, 1, 1, "rmsnorm"));
  k.push_back(streaming_kernel("mtp_hnorm", t, m.hidden, 1, 1, "rmsnorm"));
  k.push_back(gemm_kernel("mtp_eh_proj", t, m.hidden, 2 * m.hidden, DType::bf16)); // nn.Linear: not quantized
  add_head_row_kernels(k, m, par, s);
  return k;
}

/** One stream's kernels in series: under a graph, one launch then back to back; eager, kernel i cannot start
 *  before the host has launched it (i + 1 launches) nor before kernel i - 1 has ended. Kernel i's time is `us(i)`. */
template <class Us> double serial_us(std::size_t kernels, const Us& us, const DraftIssue& issue)
{
  double host = 0, gpu = 0;
  if (issue.cuda_graph)
    gpu = issue.launch_cpu_us;
  for (std::size_t i = 0; i < kernels; ++i) {
    if (!issue.cuda_graph) {
      host += issue.launch_cpu_us;
      gpu = std::max(gpu, host);
    }
    gpu += us(i) + issue.kernel_gap_us;
  }
  return gpu;
}

double serial_us(const std::vector<double>& kernel_us, const DraftIssue& issue)
{
  return serial_us(
      kernel_us.size(), [&](std::size_t i) { return kernel_us[i]; }, issue);
}

DraftPassCost pass_cost(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                        const CommSetup& comm, const DraftIssue& issue, std::vector<double>* kernels_out = nullptr,
                        MoeOpsMemo* moe_ops = nullptr)
{
  DraftPassCost p;
  p.shape           = shape;
  CommSetup unsplit = comm;
  unsplit.comm_sms  = 0; // the drafter's forward runs whole: no DBO, so no SM partition
  p.block           = moe_ops ? layer_costs(model, hw, par, shape, unsplit, *moe_ops)
                              : layer_costs(model, hw, par, shape, true, unsplit);
  std::vector<double> kernel_us;
  const std::vector<KernelWork> head = head_kernels(model, par, shape);
  // Embedding, norms and eh_proj run before the block, the shared head after it; in series the order is moot.
  for (const KernelWork& k : head) {
    const double us = kernel_time(hw, k).us;
    p.head_us += us;
    kernel_us.push_back(us);
  }
  p.head_kernels = static_cast<int>(head.size());
  for (const OpCost& op : p.block.ops) {
    if (!op.parts.empty())
      for (const OpKernelPart& part : op.parts)
        kernel_us.push_back(part.us);
    else // D and C: their kernels share the op's time alone on the fabric
      for (int i = 0; i < std::max(1, op.kernels); ++i)
        kernel_us.push_back(op.duration_us / std::max(1, op.kernels));
  }
  p.kernels = static_cast<int>(kernel_us.size());
  p.us      = serial_us(kernel_us, issue);
  if (kernels_out)
    *kernels_out = kernel_us;
  double block_us = 0;
  for (const OpCost& op : p.block.ops)
    block_us += op.duration_us;
  p.method = fmt::format("draft pass {} tokens / {} requests: mtp_block {:.3f} us + head {:.3f} us over {} kernels, "
                         "{} (+{:.3f} us gap per kernel) = {:.3f} us",
                         shape.tokens, shape.batch, block_us, p.head_us, p.kernels,
                         issue.cuda_graph ? fmt::format("one graph launch {:.3f} us", issue.launch_cpu_us)
                                          : fmt::format("eager, {:.3f} us host launch per kernel", issue.launch_cpu_us),
                         issue.kernel_gap_us, p.us);
  return p;
}

} // namespace

DraftCost draft_cost(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& target,
                     const SpecDecodeSpec& spec, const CommSetup& comm, const DraftIssue& issue)
{
  DraftCost out;
  if (!spec.enabled())
    return out;
  if (model.num_moe_layers() <= 0)
    throw std::invalid_argument(
        fmt::format("draft_cost: model {} has no MoE layer to shape the MTP block after", model.name));
  for (const StepShape& s : draft_pass_shapes(spec, target)) {
    out.passes.push_back(pass_cost(model, hw, par, s, comm, issue));
    out.us += out.passes.back().us;
  }
  return out;
}

double DraftMemo::us(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& target,
                     const SpecDecodeSpec& spec, const CommSetup& comm, const DraftIssue& issue)
{
  if (!spec.enabled())
    return 0;
  if (model.num_moe_layers() <= 0)
    return draft_cost(model, hw, par, target, spec, comm, issue).us; // its error
  double total = 0;
  for (const StepShape& s : draft_pass_shapes(spec, target)) {
    const std::vector<KernelWork> a0_context = a0_context_kernels(model, par, s);
    const std::vector<KernelWork> a1_context = a1_context_kernels(model, par, s);
    auto rows_at                             = row_us_.find(s.batch);
    if (rows_at == row_us_.end()) {
      std::vector<KernelWork> rows;
      add_head_row_kernels(rows, model, par, s);
      std::vector<double> us;
      for (const KernelWork& k : rows)
        us.push_back(kernel_time(hw, k).us);
      rows_at = row_us_.emplace(s.batch, std::move(us)).first;
    }
    const std::vector<double>& row_us = rows_at->second;
    auto key                          = std::make_pair(attention_a0_shared_key(s), attention_a1_shared_key(s));
    auto at                           = entries_.find(key);
    if (at == entries_.end()) {
      Entry e;
      const DraftPassCost p = pass_cost(model, hw, par, s, comm, issue, &e.kernel_us, &moe_ops_);
      check_layer_bounds(p.block, hw); // as sim::scenario_draft_cost checks each pass
      if (p.block.ops.size() < 2 || p.block.ops[0].kind != OpKind::A0 || p.block.ops[1].kind != OpKind::A1)
        throw InternalError("draft pass: the MTP block does not begin with A0 and A1");
      // The series: the head's kernels (its row kernels last), then each op's (A0's and A1's in their kernel lists'
      // order).
      e.rows_first               = static_cast<std::size_t>(p.head_kernels) - row_us.size();
      const std::size_t a0_first = static_cast<std::size_t>(p.head_kernels);
      const std::size_t a1_first = a0_first + p.block.ops[0].parts.size();
      add_context_positions(a0_context, attention_a0_kernels(model, par, s), a0_first, "draft pass A0", e.context);
      add_context_positions(a1_context, attention_a1_kernels(model, par, s, true), a1_first, "draft pass A1",
                            e.context);
      at = entries_.emplace(std::move(key), std::move(e)).first;
    }
    const Entry& e = at->second;
    if (e.context.size() != a0_context.size() + a1_context.size())
      throw InternalError(fmt::format("draft pass: {} context kernels where its key had {}",
                                      a0_context.size() + a1_context.size(), e.context.size()));
    std::vector<double> context_us; // in e.context's order: A0's, then A1's
    context_us.reserve(e.context.size());
    for (const std::vector<KernelWork>* list : {&a0_context, &a1_context})
      for (const KernelWork& k : *list)
        context_us.push_back(kernel_time(hw, k).us);
    total += serial_us(
        e.kernel_us.size(),
        [&](std::size_t i) {
          if (i >= e.rows_first && i - e.rows_first < row_us.size())
            return row_us[i - e.rows_first];
          const auto c = std::find(e.context.begin(), e.context.end(), i);
          return c == e.context.end() ? e.kernel_us[i] : context_us[static_cast<std::size_t>(c - e.context.begin())];
        },
        issue);
  }
  return total;
}

} // namespace dbosim::models

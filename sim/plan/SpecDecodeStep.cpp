#include "sim/plan/SpecDecodeStep.hpp"

#include "base/InputError.hpp"
#include "models/CostGuards.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace dbosim::sim {

using json = nlohmann::ordered_json;

models::DraftIssue draft_issue(const Deployment& s)
{
  models::DraftIssue d;
  d.cuda_graph = s.execution.cuda_graph != CudaGraphMode::none && !s.execution.host_sync_after_comm;
  // eager, each draft kernel costs its C++ launch and the engine's Python (host.python_launch); a graph, one launch
  d.launch_cpu_us = s.hw.launch_cpu_us + (d.cuda_graph ? 0.0 : std::max(0.0, s.hw.python_launch_us));
  d.kernel_gap_us = s.hw.graph_replay_kernel_us;
  return d;
}

namespace {
/** `price()`, a draft shape the cost model rejects an InputError naming speculative_config. */
template <class Price> auto draft_priced(const Deployment& s, const Price& price)
{
  try {
    return price();
  } catch (const std::invalid_argument& e) {
    throw InputError(s.file, 0, 0, "speculative_config", e.what(), "a draft shape the cost model accepts");
  }
}
} // namespace

models::DraftCost scenario_draft_cost(const Deployment& s, const models::StepShape& target)
{
  return draft_priced(s, [&] {
    models::DraftCost d =
        models::draft_cost(s.model, s.hw, s.parallel, target, s.speculative, comm_setup(s, 0), draft_issue(s));
    for (const models::DraftPassCost& p : d.passes)
      models::check_layer_bounds(p.block, s.hw);
    return d;
  });
}

double scenario_draft_us(const Deployment& s, const models::StepShape& target, models::DraftMemo& memo)
{
  return draft_priced(
      s, [&] { return memo.us(s.model, s.hw, s.parallel, target, s.speculative, comm_setup(s, 0), draft_issue(s)); });
}

json spec_decode_json(const Deployment& s, const models::DraftCost& draft, double target_step_us)
{
  const models::SpecDecodeSpec& sp = s.speculative;
  const double accepted            = models::expected_accepted_tokens(sp);
  json passes                      = json::array();
  for (const models::DraftPassCost& p : draft.passes)
    passes.push_back({{"tokens", p.shape.tokens},
                      {"batch", p.shape.batch},
                      {"context_len", p.shape.context_len},
                      {"us", p.us},
                      {"head_us", p.head_us},
                      {"kernels", p.kernels},
                      {"method", p.method}});
  const double step_us = target_step_us + draft.us;
  json b;
  b["method"]                   = models::spec_method_name(sp.method);
  b["num_speculative_tokens"]   = sp.num_speculative_tokens;
  b["acceptance_rate"]          = sp.acceptance_rate;
  b["tokens_per_request"]       = sp.tokens_per_request();
  b["expected_accepted_tokens"] = accepted;
  b["target_step_us"]           = target_step_us;
  b["draft_us"]                 = draft.us;
  b["draft_passes"]             = passes;
  b["step_with_draft_us"]       = step_us;
  b["tpot_us"]                  = step_us / accepted; // a request's time per output token
  return b;
}

std::string spec_decode_text(const json& b)
{
  std::string out = fmt::format(
      "speculative decoding ({}, k = {}): target {:.1f} us ({} tokens per decoding request) + draft {:.1f} us ({} "
      "pass{}) = {:.1f} us per step\n",
      b["method"].get<std::string>(), b["num_speculative_tokens"].get<int>(), b["target_step_us"].get<double>(),
      b["tokens_per_request"].get<int>(), b["draft_us"].get<double>(), b["draft_passes"].size(),
      b["draft_passes"].size() == 1 ? "" : "es", b["step_with_draft_us"].get<double>());
  out +=
      fmt::format("  {:.3f} expected accepted tokens per request per step: TPOT {:.1f} us (step / accepted tokens)\n",
                  b["expected_accepted_tokens"].get<double>(), b["tpot_us"].get<double>());
  for (const json& p : b["draft_passes"])
    out += fmt::format("  {}\n", p["method"].get<std::string>());
  return out;
}

} // namespace dbosim::sim

/* dbosim — the speculative_config section: vLLM's --speculative-config (method, num_speculative_tokens) plus the
 * acceptance rate per draft position that the deployment measures. Declared with config/ParamHelpers. */
#include "config/ParamHelpers.hpp"
#include "config/YamlMap.hpp"

#include <fmt/format.h>

namespace dbosim {
namespace {

constexpr const char* section_name = "speculative_config";

/** @brief acceptance_rate: one number (every draft position) or a list, one per position, each in [0, 1]. */
void read_acceptance(YamlMap& m, const std::string& leaf, Scenario& s)
{
  if (m.raw(leaf).IsSequence())
    s.speculative.acceptance_rate = m.get_double_list(leaf, 0.0, 1.0);
  else
    s.speculative.acceptance_rate = {m.get_double(leaf, 0.0, 1.0)};
}

} // namespace

void add_speculative_params(std::vector<ParamDecl>& p)
{
  using models::SpecMethod;
  using params::enum_param;
  using params::int_param;
  p.push_back(enum_param<SpecMethod>(
      "speculative_config.method", {{"none", SpecMethod::none}, {"deepseek_mtp", SpecMethod::deepseek_mtp}},
      SpecMethod::none,
      "vLLM --speculative-config method: deepseek_mtp drafts with the model's MTP module (one MoE decoder layer, "
      "eh_proj and the shared LM head); none: no speculative decoding",
      [](Scenario & s) -> auto& { return s.speculative.method; }));
  p.push_back(int_param(
      "speculative_config.num_speculative_tokens", "tokens", 1, 1, 16,
      "Drafts per request and step (k): each decoding request runs 1 + k tokens through the target, the draft "
      "module runs k passes",
      [](Scenario & s) -> auto& { return s.speculative.num_speculative_tokens; }));
  p.push_back({"speculative_config.acceptance_rate", "float|list", "", "required with a method",
               "0..1, or a list of num_speculative_tokens values in 0..1",
               "Probability that draft i is accepted once drafts 1..i-1 were (vLLM's per-position acceptance in its "
               "spec-decode metrics); one value: every position. Not a vLLM option: a measured input",
               [](Scenario& s) { s.speculative.acceptance_rate.clear(); }, read_acceptance});
}

void check_speculative_rules(const YamlMap& section, bool has_section, const Scenario& s)
{
  const models::SpecDecodeSpec& sp = s.speculative;
  auto key                         = [&](const char* leaf) { return std::string(has_section ? leaf : section_name); };
  if (sp.method == models::SpecMethod::none) {
    for (const char* leaf : {"num_speculative_tokens", "acceptance_rate"})
      if (has_section && section.has(leaf))
        section.fail(leaf, "has no effect without a speculative method", "method: deepseek_mtp");
    return;
  }
  if (sp.acceptance_rate.empty())
    section.fail(key("method"),
                 fmt::format("{} needs acceptance_rate (the measured acceptance per draft position)",
                             models::spec_method_name(sp.method)),
                 "acceptance_rate: a number in 0..1, or a list of num_speculative_tokens numbers");
  const auto n = static_cast<int>(sp.acceptance_rate.size());
  if (n != 1 && n != sp.num_speculative_tokens)
    section.fail("acceptance_rate", fmt::format("{} values for {} draft positions", n, sp.num_speculative_tokens),
                 fmt::format("one value, or {} values (one per draft position)", sp.num_speculative_tokens));
  if (s.model.mtp_layers <= 0)
    section.fail(key("method"),
                 fmt::format("{} drafts with the model's MTP module, and model {} has none (its "
                             "num_nextn_predict_layers, mtp_layers in the zoo, is 0)",
                             models::spec_method_name(sp.method), s.model.name),
                 "none, or a model with an MTP module (deepseek-v3, deepseek-r1)");
  // A single prefill step computes prompts: no request has a token to draft from yet, and vLLM runs no draft there
  // (a serving run prices its own decode steps with the drafts).
  const bool serving = s.requests.num_prompts > 0 || !s.requests.trace.empty();
  if (!serving && s.step.phase == models::Phase::prefill)
    section.fail(key("method"),
                 fmt::format("{} drafts on decode steps, and this single step is a prefill (workload.phase)",
                             models::spec_method_name(sp.method)),
                 "none with phase: prefill, or phase: decode");
  if (s.model.num_moe_layers() <= 0)
    section.fail(key("method"),
                 fmt::format("the MTP module is shaped as the model's MoE layers; model {} has none", s.model.name),
                 "none, or a model with MoE layers");
}

} // namespace dbosim

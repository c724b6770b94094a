#include "cli/Commands.hpp"
#include "config/EngineTable.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/All2AllTable.hpp"
#include "models/ProfileEvidence.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <fmt/format.h>

namespace dbosim::cli {

int models_command()
{
  fmt::print("{}", model_zoo_table());
  return 0;
}

int hw_command()
{
  fmt::print("{:<8} {:<10} {:>4} {:>9} {:>9} {:>9} {:>10} {:>7}  {}\n", "profile", "kind", "SMs", "bf16 TF/s",
             "fp8 TF/s", "HBM TB/s", "NVLink GB/s", "domain", "gpu");
  for (const auto& name : list_hw_profiles()) {
    const models::HwProfile hw = load_hw_profile(name);
    auto peak = [&](models::DType t) { return hw.peak_flops_per_s.count(t) ? hw.peak_flops_per_s.at(t) / 1e12 : 0.0; };
    fmt::print("{:<8} {:<10} {:>4} {:>9.0f} {:>9.0f} {:>9.2f} {:>10.0f} {:>7}  {}\n", name, hw.provenance.kind,
               hw.sm_count, peak(models::DType::bf16), peak(models::DType::fp8), hw.hbm_bytes_per_s / 1e12,
               hw.nvlink_bytes_per_s / 1e9, hw.nvlink_domain_size, hw.gpu);
  }
  // Evidence per family (models/ProfileEvidence): classified from each profile's and network file's sources.
  fmt::print("\nevidence per kernel family (tables; the keys that price other shapes, at their weakest kind):\n");
  for (const auto& name : list_hw_profiles()) {
    const models::HwProfile hw     = load_hw_profile(name);
    const models::NetworkFacts net = load_network_facts(name);
    fmt::print("{} ({})\n{}", name, hw.provenance.kind,
               models::format_profile_evidence(models::profile_evidence(hw, &net)));
  }
  return 0;
}

int schedules_command()
{
  fmt::print("{:<18} {:>13}  {:<51} {}\n", "schedule", "micro-batches", "engines", "order");
  for (const sim::ScheduleEntry& e : sim::schedule_registry())
    fmt::print("{:<18} {:>13}  {:<51} {}\n", e.name, e.num_ubatches, e.engines, e.doc);
  return 0;
}

int backends_command()
{
  // One column per trait of models/All2AllTable.hpp; SMs: "whole" when a comm CTA fills its SM.
  auto yn  = [](bool b) { return b ? "yes" : "no"; };
  auto row = [](auto name, auto sms, auto honours, auto hook, auto masked, auto dbo, auto async, auto ubatch, auto d,
                auto c, auto platform, auto vllm, auto doc) {
    fmt::print("{:<23} {:<5} {:<12} {:<9} {:<6} {:<3} {:<13} {:<11} {:<2} {:<2} {:<8} {:<23} {}\n", name, sms, honours,
               hook, masked, dbo, async, ubatch, d, c, platform, vllm, doc);
  };
  row("backend", "SMs", "dbo_comm_sms", "recv_hook", "masked", "dbo", "async_combine", "vllm_ubatch", "D", "C",
      "platform", "vllm --all2all-backend", "doc");
  for (const models::All2AllTraits& t : models::all2all_traits)
    row(t.name, t.whole_sm_ctas ? "whole" : yn(t.holds_sms), yn(t.honours_dbo_comm_sms), yn(t.has_recv_hook),
        yn(t.masked_expert_input), yn(t.dbo), yn(t.async_combine), yn(t.vllm_ubatching), t.dispatch.count,
        t.combine.count, models::all2all_platform_name(t), t.vllm_name, t.doc);
  return 0;
}

std::string engine_rules_text(const ServingEngine& e)
{
  const bool one_schedule = e.decode_schedule == e.prefill_schedule;
  std::string out = fmt::format("{} ({}{}): default overlap.schedule {}{}{}, launch {}\n", engine_id(e), e.label,
                                e.is_default ? fmt::format(", what `engine: {}` names", e.name) : "",
                                sim::schedule_name(e.decode_schedule), one_schedule ? "" : " (decode), ",
                                one_schedule ? "" : sim::schedule_name(e.prefill_schedule) + std::string(" (prefill)"),
                                *e.launch_text ? e.launch_text : "none (no public command)");
  for (const NamedRule& r : engine_rules)
    out += fmt::format("  {:<11} {}\n  {:<11} source: {}\n", r.what, (e.*r.rule).rule, "", (e.*r.rule).source);
  return out;
}

int engines_command()
{
  auto row = [](auto id, auto label, auto bare, auto schedules, auto launch) {
    fmt::print("{:<17} {:<28} {:<9} {:<35} {}\n", id, label, bare, schedules, launch);
  };
  row("engine", "label", "bare name", "schedule (decode / prefill)", "launch");
  for (const ServingEngine& e : serving_engines)
    row(engine_id(e), e.label, e.is_default ? e.name : "-",
        fmt::format("{} / {}", sim::schedule_name(e.decode_schedule), sim::schedule_name(e.prefill_schedule)),
        *e.launch_text ? e.launch_text : "-");
  for (const ServingEngine& e : serving_engines)
    fmt::print("\n{}", engine_rules_text(e));
  return 0;
}

} // namespace dbosim::cli

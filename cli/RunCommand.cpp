#include "base/AtomicFile.hpp"
#include "base/InputError.hpp"
#include "cli/Commands.hpp"
#include "cli/CostReport.hpp"
#include "cli/EngineRun.hpp"
#include "cli/ServingCommand.hpp"
#include "config/EngineTable.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/ScenarioParams.hpp"
#include "models/ProfileEvidence.hpp"
#include "plan/LaunchCommand.hpp"
#include "serving/KvCapacity.hpp"
#include "sim/output/OutputGuards.hpp"
#include "sim/output/TraceSelection.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dbosim::cli {

namespace {

/** @brief A note when the step's KV does not fit the DP rank's cache as vLLM sizes it (HBM x gpu_memory_utilization
 *  less weights and activations: serving/KvCapacity): no engine would hold this batch at once. The step is still
 *  priced (its kernels cost what they cost, a what-if the summary keeps), and the note says so; "" when it fits. */
std::string kv_fit_note(const Scenario& s)
{
  std::string why;
  try {
    const serving::KvCapacity cap = serving::kv_capacity(s);
    const long per_request        = (long(s.step.context_len) + cap.block_size - 1) / cap.block_size;
    const long need_blocks        = long(s.step.batch) * per_request;
    if (need_blocks <= cap.num_blocks)
      return "";
    why = fmt::format(
        "{} requests x {} tokens of context need {:.1f} GiB of KV per GPU, and the cache holds {:.1f} GiB "
        "({} tokens)",
        s.step.batch, s.step.context_len, double(need_blocks) * cap.block_size * cap.kv_bytes_per_token / (1L << 30),
        double(cap.tokens()) * cap.kv_bytes_per_token / (1L << 30), cap.tokens());
  } catch (const InputError& e) {
    why = e.what();
  }
  return fmt::format("note: this step's KV does not fit in HBM: {}; no engine would run this batch at once (the step "
                     "is priced as given)\n",
                     why);
}

/** @brief A note naming the families whose costs in `cost` rest on estimated profile numbers (models/ProfileEvidence),
 *  "" when none: the step's costs are only as good as those numbers. */
std::string estimated_families_note(const Scenario& s, const CostReport& cost)
{
  const bool scale_out = s.parallel.ep > s.hw.nvlink_domain_size;
  const std::vector<std::string> used =
      models::estimated_families_used(s.hw, s.parallel.ep > 1 ? &s.network : nullptr,
                                      {&cost.moe_layer, &cost.dense_layer}, {&cost.step_work}, scale_out);
  if (used.empty())
    return "";
  return fmt::format("note: profile {} prices these kernel families with estimates (no measured or published "
                     "figure; `dbosim hw` lists each profile's evidence): {}\n",
                     s.hw.name, fmt::join(used, "; "));
}

} // namespace

int run_command(const RunOptions& opt)
{
  if (opt.help_params) {
    fmt::print("{}", format_param_table());
    return 0;
  }
  const Scenario s                = load_scenario(opt.scenario);
  const sim::TraceSelection trace = sim::parse_trace_selection(opt.trace, s.parallel.ep);
  std::optional<sim::EngineKind> engine;
  if (!opt.engine.empty())
    engine = sim::engine_from_option(opt.engine);
  if (has_serving_workload(s)) {
    std::string flags;
    for (const auto& [set, flag] :
         {std::pair{opt.compare, "--compare"}, std::pair{!opt.explain.empty(), "--explain"},
          std::pair{!opt.schedule.empty(), "--schedule"}, std::pair{!opt.trace.empty(), "--trace"}})
      if (set)
        flags += (flags.empty() ? "" : ", ") + std::string(flag);
    if (!flags.empty())
      throw InputError(opt.scenario, fmt::format("{} appl{} to one-step scenarios; this one is a serving run "
                                                 "(workload.num_prompts or workload.trace), which would ignore it",
                                                 flags, flags.find(',') == std::string::npos ? "ies" : "y"));
    fmt::print(stderr, "{}", estimated_families_note(s, build_cost_report(s)));
    return serving_command(s, opt.out_dir, opt.simgrid_args, engine, opt.share_shapes);
  }
  const CostReport cost = build_cost_report(s);
  fmt::print("{}", format_cost_report(s, cost));
  fmt::print(stderr, "{}", kv_fit_note(s));
  fmt::print(stderr, "{}", estimated_families_note(s, cost));
  if (!opt.explain.empty())
    fmt::print("{}engine {}", explain_op(cost, opt.explain), engine_rules_text(engine_row(s.engine)));

  nlohmann::ordered_json summary;
  summary["scenario"] = s.name;
  summary["model"]    = s.model.name;
  summary["seed"]     = s.seed;
  summary["costs"]    = cost_report_json(s, cost);
  EngineRunOptions eo;
  eo.schedule     = opt.schedule;
  eo.compare      = opt.compare;
  eo.simgrid_args = opt.simgrid_args;
  eo.engine       = engine;
  eo.trace        = trace;
  if (!opt.write_trace)
    eo.trace.mode = sim::TraceMode::none;
  const nlohmann::ordered_json timeline = run_engine(s, opt.out_dir, eo);
  for (auto it = timeline.begin(); it != timeline.end(); ++it)
    summary[it.key()] = it.value();
  const plan::LaunchCommand launch = plan::launch_command(s);
  summary["launch"]                = plan::launch_json(launch);
  sim::require_valid_summary(summary);
  write_file_atomic(opt.out_dir + "/summary.json", summary.dump(2) + "\n");
  fmt::print("\nlaunch ({}):\n{}", engine_row(s.engine).label, plan::format_launch(launch));
  fmt::print("wrote {}/summary.json\n", opt.out_dir);
  return 0;
}

} // namespace dbosim::cli

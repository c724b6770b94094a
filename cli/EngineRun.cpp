#include "cli/EngineRun.hpp"

#include "base/AtomicFile.hpp"
#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "config/DataDir.hpp"
#include "models/All2AllTable.hpp"
#include "sim/engine/ClusterRun.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/output/OutputGuards.hpp"
#include "sim/output/Summary.hpp"
#include "sim/output/TraceWriter.hpp"
#include "sim/plan/SpecDecodeStep.hpp"
#include "sim/plan/StepPlanBuilder.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"
#include "validate/ErrorBand.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <ostream>
#include <system_error>
#include <vector>

namespace dbosim::cli {

using json = nlohmann::ordered_json;

namespace {

/** `text` with the model's uncertainty band (validate's e2e group, from the recorded baseline; its cases of the GPU's
 *  `generation` when enough are recorded) on the line after the first line holding `after` (the step time). */
std::string with_band(std::string text, const std::string& after, const std::string& generation)
{
  const std::string shown = "validate/baseline.yaml"; // in the data folder
  auto band               = validate::load_error_band(data_dir() + "/" + shown, generation);
  if (band)
    band->source = shown;
  const std::string line = "  " + validate::band_text(band, shown) + "\n";
  const std::size_t at   = text.find(after);
  const std::size_t eol  = at == std::string::npos ? std::string::npos : text.find('\n', at);
  if (eol == std::string::npos)
    return text + line;
  return text.insert(eol + 1, line);
}

/** Every rank simulated (sim/engine/ClusterRun) when routing is drawn: ranks then differ. Balanced routing makes every
 *  rank identical, and the single-rank engine is that exact shortcut. */
bool every_rank(const Scenario& s) { return s.cluster.routing.dist != models::RoutingDist::balanced; }

/** Under speculative decoding the engine's step is the target's forward; the draft's passes follow it. */
void add_speculative(const Scenario& s, json& summary)
{
  if (!s.speculative.enabled())
    return;
  const models::DraftCost draft = sim::scenario_draft_cost(s, s.step);
  summary["speculative"]        = sim::spec_decode_json(s, draft, summary["step_time_us"].get<double>());
}

std::string speculative_text(const json& summary)
{
  return summary.contains("speculative") ? sim::spec_decode_text(summary["speculative"]) : std::string();
}

/** out_dir/trace.json from `writer`, or, when the run draws none, no trace.json at all: one an earlier run left in
 *  the folder would pass for this run's. No folder (step_figures): no file either way. */
void write_trace(const std::string& out_dir, bool written, const std::function<void(std::ostream&)>& writer)
{
  if (out_dir.empty())
    return;
  const std::string path = out_dir + "/trace.json";
  if (written) {
    write_file_atomic(path, writer);
    return;
  }
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec)
    throw InputError(out_dir, fmt::format("cannot remove the earlier run's trace.json: {}", ec.message()));
}

/** The engine that ran the step. */
std::string engine_line(const json& summary)
{
  return fmt::format("engine: {}\n", summary["engine"].get<std::string>() == "replay"
                                         ? "the max-plus replay (exact for this step)"
                                         : "SimGrid");
}

json simulate_cluster(const Scenario& s, const std::string& out_dir, const EngineRunOptions& opt,
                      const sim::PlanOptions& popt, bool print, bool write_summary)
{
  const sim::ClusterRun run =
      sim::run_cluster(s, popt, 1, opt.simgrid_args, opt.engine.value_or(sim::EngineKind::automatic));
  // The summary a single-rank run writes, of the representative rank (its step is the cluster's), plus the per-rank
  // spread.
  const sim::RankStep rep = sim::representative_step(run);
  json summary            = sim::summary_json(*rep.plan, rep.metrics);
  summary["cluster"]      = sim::cluster_summary_json(run.plan, run.metrics);
  summary["engine"]       = run.simgrid ? "simgrid" : "replay";
  add_speculative(s, summary);
  sim::require_valid_summary(summary);
  const sim::TracedRanks traced = sim::pick_trace_ranks(opt.trace, run.plan, run.metrics);
  write_trace(out_dir, traced.written(),
              [&](std::ostream& out) { sim::write_cluster_trace(out, run.sched, run.plan, run.timeline, traced); });
  if (write_summary)
    write_file_atomic(out_dir + "/summary.json", summary.dump(2) + "\n");
  if (print)
    fmt::print("{}{}{}{}trace: {}\n{}",
               with_band(sim::cluster_summary_text(run.plan, run.metrics), "step ", s.hw.generation),
               sim::summary_text(*rep.plan, rep.metrics), speculative_text(summary), engine_line(summary),
               sim::traced_ranks_text(traced),
               traced.written() ? fmt::format("wrote {}/trace.json\n", out_dir) : std::string());
  return summary;
}

/** One simulation: plan, schedule, replay, metrics; writes summary.json (when asked) and trace.json. */
json simulate(const Scenario& s, const std::string& out_dir, const EngineRunOptions& opt, bool print,
              bool write_summary)
{
  sim::PlanOptions popt;
  popt.schedule = opt.schedule;
  if (every_rank(s))
    return simulate_cluster(s, out_dir, opt, popt, print, write_summary);
  const sim::StepPlan plan  = sim::build_step_plan(s, s.step, sim::model_cost_source(s), popt);
  const sim::Schedule sched = sim::build_schedule(plan);
  const sim::StepRun run =
      sim::run_step(plan, sched, {opt.simgrid_args, opt.engine.value_or(sim::EngineKind::simgrid)});
  const sim::Timeline& tl = run.timeline;
  const sim::Metrics& m   = run.metrics;
  json summary            = sim::summary_json(plan, m);
  summary["engine"]       = sim::engine_name(run.engine);
  add_speculative(s, summary);
  sim::require_valid_summary(summary);
  const bool trace = opt.trace.mode != sim::TraceMode::none; // one rank: every mode but none draws it
  write_trace(out_dir, trace, [&](std::ostream& out) { sim::write_chrome_trace(out, sched, plan, tl); });
  if (write_summary)
    write_file_atomic(out_dir + "/summary.json", summary.dump(2) + "\n");
  if (print)
    fmt::print("{}{}{}", with_band(sim::summary_text(plan, m), "step time ", s.hw.generation),
               speculative_text(summary),
               engine_line(summary) + (trace ? fmt::format("wrote {}/trace.json\n", out_dir)
                                             : std::string("trace: none (--trace none)\n")));
  return summary;
}

struct Mode {
  const char* label;
  bool dbo;
  bool async_combine;
};
constexpr Mode compare_modes[] = {{"overlap_off", false, false}, {"async_combine", false, true}, {"dbo", true, false}};

/** Runs each mode in a forked child (a fresh SimGrid per simulation) and reads back its summary. A mode the
 *  scenario cannot run is the scenario's input error (exit 2); a mode the all-to-all backend has no way to run (DBO
 *  or async combine on a backend the loader refuses them for, such as mori) is left out, with a line saying so. */
json compare(const Scenario& s, const std::string& out_dir, const EngineRunOptions& opt)
{
  std::vector<std::string> labels;
  std::vector<json> summaries;
  const models::All2AllTraits& traits = models::all2all_traits_of(s.parallel.backend);
  for (const Mode& mode : compare_modes) {
    if ((mode.dbo && !traits.dbo) || (mode.async_combine && !traits.async_combine)) {
      fmt::print("--compare: no {} column: the {} all-to-all backend has no {}\n", mode.label, traits.name,
                 mode.dbo ? "DBO" : "async combine (finalize_async)");
      continue;
    }
    Scenario variant              = s;
    variant.overlap.enable_dbo    = mode.dbo;
    variant.overlap.ubatch_size   = 0;
    variant.overlap.async_combine = mode.async_combine;
    if (!mode.dbo) // overlap.schedule stands for the DBO column (a two-micro-batch one) only
      variant.overlap.schedule.reset();
    const std::string dir        = out_dir + "/compare/" + mode.label;
    const sim::ChildResult child = sim::run_in_child([&] {
      EngineRunOptions mode_opt = opt; // the mode's own schedule, the same SimGrid options
      mode_opt.schedule         = "";
      mode_opt.compare          = false;
      return simulate(variant, dir, mode_opt, false, true).dump();
    });
    if (child.outcome == sim::ChildOutcome::input_error)
      throw InputError(s.file, fmt::format("--compare: the {} run: {}", mode.label, child.message));
    if (!child.ok())
      throw InternalError(fmt::format("--compare: the {} run failed ({}): {}", mode.label,
                                      sim::child_outcome_name(child.outcome), child.message));
    labels.emplace_back(mode.label);
    summaries.push_back(json::parse(child.payload));
  }
  fmt::print("{}", sim::compare_text(labels, summaries));
  json out = json::object();
  for (std::size_t i = 0; i < labels.size(); ++i)
    out[labels[i]] = summaries[i];
  return out;
}

} // namespace

json step_figures(const Scenario& s, sim::EngineKind engine)
{
  EngineRunOptions opt;
  opt.engine     = engine;
  opt.trace.mode = sim::TraceMode::none;
  return simulate(s, "", opt, false, false);
}

json run_engine(const Scenario& s, const std::string& out_dir, const EngineRunOptions& opt)
{
  json cmp;
  if (opt.compare)
    cmp = compare(s, out_dir, opt); // before this process starts its own SimGrid
  json summary = simulate(s, out_dir, opt, true, false);
  if (opt.compare)
    summary["compare"] = std::move(cmp);
  return summary;
}

} // namespace dbosim::cli

/* dbosim — command-line entry point. Exit codes: 0 success, 2 bad input, 1 internal error. */
#include "base/InputError.hpp"
#include "cli/Commands.hpp"
#include "cli/PlanCommand.hpp"
#include "cli/ServingCommand.hpp"
#include "cli/UsageExit.hpp"
#include "cli/ValidateCommand.hpp"
#include "config/OutputDir.hpp"
#include "serving/StepDiskCache.hpp"
#include "sim/engine/SimConfig.hpp"
#include "sim/engine/StepEngine.hpp"
#include "sim/output/TraceSelection.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <exception>

namespace {

using namespace dbosim;

/** `dbosim run SCENARIO`: one scenario, its summary and trace. */
CLI::App* add_run_command(CLI::App& app, cli::RunOptions& run_opt)
{
  CLI::App* run = app.add_subcommand("run", "Simulate one scenario YAML and write DIR/summary.json");
  run->add_option("scenario", run_opt.scenario, "Scenario YAML (see scenarios/)");
  run->add_option("--out", run_opt.out_dir, "Output folder")->capture_default_str();
  run->add_flag("--help-params", run_opt.help_params, "Print every scenario parameter (unit, default, range, doc)");
  run->add_option("--schedule", run_opt.schedule,
                  "Engine schedule: " + sim::schedule_names() +
                      " (default: the scenario's overlap.schedule, else vLLM's rules; `dbosim schedules` lists them)");
  run->add_option("--explain", run_opt.explain,
                  "Print every kernel behind one op's cost (family, shape, time, where vLLM launches it) and its "
                  "terms; STEP: the work outside the layers (embedding, final norm, LM head, sampler)")
      ->check(CLI::IsMember({"A0", "A1", "D", "MLP", "S", "C", "STEP"}));
  run->add_flag("--compare", run_opt.compare, "Also run overlap off / async combine only / DBO, side by side");
  run->add_option("--engine", run_opt.engine,
                  "simgrid (the reference; default for one rank), replay (the exact max-plus replay; refused where "
                  "a comm kernel shares the GPU or the host syncs), auto (replay where exact, else SimGrid in a child; "
                  "default for every-rank cluster runs)")
      ->check(CLI::IsMember(sim::engine_name_list()));
  run->add_option("--trace", run_opt.trace,
                  "The ranks trace.json draws: auto (default: every rank up to " +
                      std::to_string(sim::trace_all_ranks_max) +
                      ", above that the slowest, median and fastest ranks plus the collectives' landings), all, none "
                      "(no trace.json), or ranks=LIST (comma-separated ranks of the EP group, plus the landings)");
  run->add_option("--simgrid", run_opt.simgrid_args,
                  "A SimGrid option for the engine, e.g. --simgrid=--log=dbo_engine.thres:verbose (repeatable)");
  return run;
}

/** `dbosim sweep SCENARIO`: every point of its sweep: section. */
CLI::App* add_sweep_command(CLI::App& app, cli::SweepOptions& sweep_opt)
{
  CLI::App* sweep = app.add_subcommand("sweep", "Run every point of a scenario's sweep: section (-j worker processes)");
  sweep->add_option("scenario", sweep_opt.scenario, "Scenario YAML with a sweep: section")->required();
  sweep->add_option("--out", sweep_opt.out_dir, "Output folder (points/NNNN/, sweep.csv)")->capture_default_str();
  sweep->add_option("-j,--jobs", sweep_opt.jobs, "Points at once (default: the cores this process may run on)")
      ->check(CLI::Range(0, 4096));
  sweep->add_flag("--resume", sweep_opt.resume,
                  "Keep the points an earlier sweep into the same --out finished (same point scenario, exit 0)");
  sweep
      ->add_option("--engine", sweep_opt.engine,
                   "auto (default: -j worker processes, many points each, the exact replay where it applies and "
                   "SimGrid elsewhere; no trace.json per point), replay, or simgrid (each point as `dbosim run` in "
                   "its own process, with its trace)")
      ->check(CLI::IsMember(sim::engine_name_list()))
      ->capture_default_str();
  sweep->add_flag("--table-only", sweep_opt.table_only,
                  "One-step sweeps: price each point in memory in the -j workers and write sweep.csv and the printed "
                  "table only, the same rows (no points/NNNN/ folders, no point cache; not with --resume, --engine "
                  "simgrid or serving points)");
  return sweep;
}

/** `dbosim plan PLAN`: the capacity plan. */
CLI::App* add_plan_command(CLI::App& app, cli::PlanOptions& plan_opt)
{
  CLI::App* plan = app.add_subcommand("plan", "Capacity plan: SLO search, fewest GPUs, Pareto frontier, report");
  plan->add_option("plan", plan_opt.plan, "Plan YAML (see plans/)")->required();
  plan->add_option("--out", plan_opt.out_dir, "Output folder (points.csv, report.md, report.html)")
      ->capture_default_str();
  plan->add_option(
          "-j,--jobs", plan_opt.jobs,
          "Points at once per rank (default: the cores the rank is bound to, else the machine's / its ranks there)")
      ->check(CLI::Range(0, 4096));
  plan->add_option("--engine", plan_opt.engine, "The points' engine, as for sweep: auto, replay or simgrid")
      ->check(CLI::IsMember(sim::engine_name_list()))
      ->capture_default_str();
  return plan;
}

/** The listing verbs (models, hw, schedules, backends, engines). */
struct ListCommands {
  CLI::App* models;
  CLI::App* hw;
  CLI::App* scheds;
  CLI::App* a2a;
  CLI::App* engines;
};

ListCommands add_list_commands(CLI::App& app)
{
  CLI::App* models  = app.add_subcommand("models", "List the model zoo");
  CLI::App* hw      = app.add_subcommand("hw", "List the hardware profiles");
  CLI::App* scheds  = app.add_subcommand("schedules", "List the engine schedules (run --schedule NAME)");
  CLI::App* a2a     = app.add_subcommand("backends", "List the all-to-all backends and their traits "
                                                         "(overlap.all2all_backend NAME)");
  CLI::App* engines = app.add_subcommand("engines", "List the serving engines, their default schedules, launch "
                                                    "commands and rules with sources (engine: NAME[@VERSION])");

  return {models, hw, scheds, a2a, engines};
}

/** Runs the verb the command line named; 1 when none did. */
int run_verb(cli::RunOptions& run_opt, cli::SweepOptions& sweep_opt, cli::PlanOptions& plan_opt, CLI::App* run,
             CLI::App* sweep, CLI::App* plan, const ListCommands& list, CLI::App* validate)
{
  if (run->parsed()) {
    if (run_opt.scenario.empty() && !run_opt.help_params) {
      fmt::print(stderr, "dbosim run: a scenario file is required (or --help-params)\n");
      return 2;
    }
    if (!run_opt.help_params)
      prepare_out_dir(run_opt.out_dir);
    if (const std::string why = sim::simgrid_args_problem(run_opt.simgrid_args); !why.empty())
      throw InputError("--simgrid", 0, 0, "", why, "--cfg=KEY:VALUE or --log=CATEGORY.thres:LEVEL, as SimGrid takes");
    return cli::run_command(run_opt);
  }
  if (sweep->parsed()) {
    prepare_out_dir(sweep_opt.out_dir);
    return cli::sweep_command(sweep_opt);
  }
  if (plan->parsed()) {
    prepare_out_dir(plan_opt.out_dir);
    return cli::plan_command(plan_opt);
  }
  if (list.models->parsed())
    return cli::models_command();
  if (list.hw->parsed())
    return cli::hw_command();
  if (list.scheds->parsed())
    return cli::schedules_command();
  if (list.a2a->parsed())
    return cli::backends_command();
  if (list.engines->parsed())
    return cli::engines_command();
  if (validate->parsed())
    return cli::validate_command();
  return 1;
}

/** After a run with --step-cache: the folder's entries kept under the cap, and a line on stderr when some went. */
void prune_step_cache(const std::string& dir, std::uintmax_t max_mb)
{
  constexpr std::uintmax_t mib            = std::uintmax_t{1} << 20;
  const dbosim::serving::CachePrune prune = dbosim::serving::prune_step_cache(dir, max_mb * mib);
  if (prune.removed > 0)
    fmt::print(stderr,
               "step cache: removed the {} least recently used entries of {} ({} -> {} MiB; --step-cache-max-mb "
               "{})\n",
               prune.removed, dir, prune.bytes_before / mib, prune.bytes_after / mib, max_mb);
}

} // namespace

int main(int argc, char** argv)
{
  using namespace dbosim;
  CLI::App app{"dbosim: a discrete-event simulator of MoE expert-parallel serving (DBO, async combine, DeepEP)"};
  app.require_subcommand(1);

  cli::RunOptions run_opt;
  CLI::App* run = add_run_command(app, run_opt);
  cli::SweepOptions sweep_opt;
  CLI::App* sweep = add_sweep_command(app, sweep_opt);
  cli::PlanOptions plan_opt;
  CLI::App* plan = add_plan_command(app, plan_opt);
  std::string step_cache; // serving/StepDiskCache: the same folder for every verb that prices serving steps
  std::uintmax_t step_cache_max_mb = 4096;
  for (CLI::App* verb : {run, sweep, plan}) {
    verb->add_option("--step-cache", step_cache,
                     "Keep the serving step times in DIR across runs (also DBOSIM_STEP_CACHE=DIR): a later run over "
                     "the same model, profile, deployment and engine simulates none of them again (default: off)");
    verb->add_option("--step-cache-max-mb", step_cache_max_mb,
                     "With --step-cache: after the run, remove the least recently used entries of DIR while they "
                     "hold more than this many MiB (down to 90% of it)")
        ->check(CLI::Range(std::uintmax_t{1}, std::uintmax_t{1} << 30))
        ->default_val(step_cache_max_mb);
  }
  const ListCommands list = add_list_commands(app);

  CLI::App* validate = cli::add_validate_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::usage_exit(app, e, "dbosim");
  }

  try {
    if (!step_cache.empty())
      serving::set_step_cache_dir(step_cache, "--step-cache");
    const int rc = run_verb(run_opt, sweep_opt, plan_opt, run, sweep, plan, list, validate);
    if (!step_cache.empty())
      prune_step_cache(serving::step_cache_dir(), step_cache_max_mb);
    return rc;
  } catch (const InputError& e) {
    fmt::print(stderr, "dbosim: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dbosim: internal error: {}\n", e.what());
    return 1;
  }
}

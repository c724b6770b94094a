#include "cli/PlanCommand.hpp"

#include "base/AtomicFile.hpp"
#include "base/ChildProcess.hpp"
#include "base/Cores.hpp"
#include "base/InputError.hpp"
#include "base/SelfExe.hpp"
#include "cli/ServingCommand.hpp"
#include "cli/StopOnSignal.hpp"
#include "config/DataDir.hpp"
#include "config/EngineTable.hpp"
#include "config/ScenarioLoader.hpp"
#include "plan/LaunchCommand.hpp"
#include "plan/MpiSession.hpp"
#include "plan/PlanAnalysis.hpp"
#include "plan/PlanPlots.hpp"
#include "plan/PlanReport.hpp"
#include "validate/ErrorBand.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

namespace dbosim::cli {
namespace {

namespace fs = std::filesystem;
using json   = nlohmann::json;
using namespace dbosim::plan;

std::string read_text(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string hardware_of(const PlanSpec& spec, const PlanPoint& p)
{
  const std::string v = p.value("hardware");
  return fs::path(v.empty() ? spec.base["hardware"].as<std::string>() : v).stem().string();
}

/** This rank's points through the sweep runner; returns a JSON array of {index, status, serving}: status "ok", "not
 *  run" (a signal stopped the sweep first) or "failed". */
json run_share(const PlanSpec& spec, const std::vector<PlanPoint>& mine, const std::string& scratch, int jobs,
               const std::string& engine)
{
  json out = json::array();
  if (mine.empty())
    return out;
  SweepOptions so;
  so.scenario = scratch + "/shard.yaml";
  so.out_dir  = scratch + "/sweep";
  so.jobs     = jobs;
  so.engine   = engine;
  write_file_atomic(so.scenario, shard_sweep_yaml(spec, mine));
  sweep_command(so); // failed points are reported per point below
  const bool stopped = StopOnSignal::requested() != 0;
  for (std::size_t j = 0; j < mine.size(); ++j) {
    const std::string summary = fmt::format("{}/points/{:04d}/summary.json", so.out_dir, j);
    json r{{"index", mine[j].index}, {"status", stopped ? "not run" : "failed"}, {"serving", json::object()}};
    if (fs::exists(summary)) {
      const json s = json::parse(read_text(summary));
      if (s.contains("serving")) {
        r["status"]  = "ok";
        r["serving"] = s["serving"];
      }
    }
    out.push_back(r);
  }
  return out;
}

/** One engine step of the recommended point (a decode step of its mean batch per DP rank, each request its 1 + k
 *  tokens under speculative decoding), for the timeline. */
std::string timeline_svg(const PlanSpec& spec, const PointResult& rec, const std::string& out_dir, std::string& caption)
{
  const std::string dir = out_dir + "/timeline";
  fs::remove_all(dir);
  const std::string point      = point_yaml(spec, rec.point);
  YAML::Node node              = YAML::Load(point);
  const int tokens_per_request = load_scenario_node(YAML::Load(point), spec.file).speculative.tokens_per_request();
  const double dp              = metric(rec, "dp");
  const int batch = std::max(1, static_cast<int>(std::lround(metric(rec, "mean_requests_in_system") / dp)));
  node["workload"]["num_prompts"]     = 0;
  node["workload"]["phase"]           = "decode";
  node["workload"]["tokens_per_rank"] = batch * tokens_per_request;
  node["workload"].remove("batch");
  YAML::Emitter em;
  em << node;
  write_file_atomic(dir + "/scenario.yaml", std::string(em.c_str()) + "\n");
  caption = fmt::format("One decode step of point {} ({} requests per DP rank, its mean in flight), the first 2 MoE "
                        "layers: compute and comm streams, each op coloured by micro-batch.",
                        rec.point.index, batch);
  // A child of this process (not std::system, which ignores SIGINT while it waits): stopped with the plan.
  const std::string exe = self_exe("dbosim plan");
  sim::ChildProcess run([&]() -> std::string {
    const int fd = open((dir + "/log.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    const std::string yaml = dir + "/scenario.yaml";
    execl(exe.c_str(), exe.c_str(), "run", yaml.c_str(), "--out", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  });
  std::optional<sim::ChildResult> ended;
  while (!(ended = run.try_wait())) {
    if (const int sig = StopOnSignal::requested()) {
      run.kill(sig);
      ended = run.wait();
      break;
    }
    usleep(20000);
  }
  if (ended->exit_code != 0 || !fs::exists(dir + "/trace.json")) {
    caption = fmt::format("The step run of the recommended point failed (see {}/log.txt).", dir);
    return timeline_plot(out_dir + "/plots", json::object({{"traceEvents", json::array()}}), 2, "no trace");
  }
  return timeline_plot(
      out_dir + "/plots", json::parse(read_text(dir + "/trace.json")), 2,
      fmt::format("point {}: one decode step (batch {} per rank), first 2 MoE layers", rec.point.index, batch));
}

/** The recommended point's launch on its engine, from its scenario (written beside the timeline's). */
PointLaunch launch_text(const PlanSpec& spec, const PointResult& rec, const std::string& out_dir)
{
  const std::string path = out_dir + "/launch/scenario.yaml";
  write_file_atomic(path, point_yaml(spec, rec.point));
  try {
    const Scenario s = load_scenario(path);
    return {engine_row(s.engine).label, format_launch(launch_command(s))};
  } catch (const std::exception& e) {
    return {default_engine().label,
            fmt::format("# the launch of point {} could not be derived: {}\n", rec.point.index, e.what())};
  }
}

/** The GPU generation of the point launch_text wrote (its scenario's hardware profile); empty when it does not load,
 *  as launch_text says in the report. */
std::string launch_generation(const std::string& out_dir)
{
  try {
    return load_scenario(out_dir + "/launch/scenario.yaml").hw.generation;
  } catch (const std::exception&) {
    return "";
  }
}

/** What a stopped plan leaves: points.partial.csv (each point's values and whether it ran), no points.csv and no
 *  report; returns the exit code, 128 + signal. */
int stopped_plan(const PlanOptions& opt, const std::vector<PointResult>& results, int sig)
{
  std::string csv = "point";
  if (!results.empty())
    for (const std::string& k : results.front().point.keys)
      csv += "," + k;
  csv += ",status\n";
  std::size_t ran = 0;
  for (const PointResult& r : results) {
    csv += fmt::format("{}", r.point.index);
    for (const std::string& v : r.point.values)
      csv += "," + (v.find_first_of(",\"") != std::string::npos ? "\"" + v + "\"" : v);
    csv += "," + r.status + "\n";
    ran += r.status != "not run";
  }
  for (const char* f : {"points.csv", "report.md", "report.html"})
    fs::remove(opt.out_dir + "/" + f);
  write_file_atomic(opt.out_dir + "/points.partial.csv", csv);
  fmt::print(stderr,
             "\ndbosim plan: stopped by signal {} ({} of {} points ran); wrote {}/points.partial.csv, no report\n", sig,
             ran, results.size(), opt.out_dir);
  return 128 + sig;
}

/** Every point's result as the ranks' shares report it (a point no share names stays "failed"); `any_not_run` when a
 *  rank was stopped before it ran one of its points. */
std::vector<PointResult> gather_results(const PlanSpec& spec, const std::vector<PlanPoint>& points,
                                        const std::vector<std::string>& shares, bool& any_not_run)
{
  std::vector<PointResult> results(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    results[i] = {points[i], hardware_of(spec, points[i]), "failed", json::object()};
  any_not_run = false;
  for (const std::string& text : shares)
    for (const json& r : json::parse(text)) {
      const std::size_t i = r["index"].get<std::size_t>();
      results[i].status   = r["status"].get<std::string>();
      results[i].serving  = r["serving"];
      any_not_run         = any_not_run || results[i].status == "not run";
    }
  return results;
}

/** The band is validate's e2e group (whole steps and serving runs against published deployments), read from the
 *  recorded baseline: its cases of the recommended GPU's generation when enough are recorded (no per-schedule e2e
 *  error is recorded). */
ModelError plan_error_band(const PlanOptions& opt, const PlanSpec& spec, const PlanAnalysis& an)
{
  ModelError err;
  err.source = spec.uncertainty.empty() ? data_dir() + "/validate/baseline.yaml" : spec.uncertainty;
  err.group  = validate::band_group;
  if (const auto band =
          validate::load_error_band(err.source, an.recommended ? launch_generation(opt.out_dir) : std::string())) {
    err.mape_pct   = band->mape_pct;
    err.cases      = band->cases;
    err.generation = band->generation;
    err.note       = band->note;
  }
  if (!fs::exists(err.source))
    err.source = "";
  // The report names the file without this machine's paths: the shipped baseline relative to the data folder, a
  // plan's own uncertainty file relative to the plan file (as the plan names it).
  else if (spec.uncertainty.empty())
    err.source = fs::path(err.source).lexically_relative(data_dir()).string();
  else
    err.source =
        fs::path(err.source).lexically_relative(fs::absolute(opt.plan).lexically_normal().parent_path()).string();
  return err;
}

/** The report's plots under OUT/plots: the frontier, p99 ITL and TTFT against EP, the recommended point's timeline. */
ReportPlots plan_plots(const PlanOptions& opt, const PlanSpec& spec, const std::vector<PointResult>& results,
                       const PlanAnalysis& an)
{
  fs::create_directories(opt.out_dir + "/plots");
  ReportPlots plots;
  plots.frontier = frontier_plot(opt.out_dir + "/plots", results, an);
  auto slo_of    = [&](const std::string& m) {
    for (const Slo& s : spec.slos)
      if (s.metric == m)
        return s.max_ms;
    return 0.0;
  };
  plots.itl_vs_ep  = latency_vs_ep_plot(opt.out_dir + "/plots", "p99_itl_ms", slo_of("p99_itl_ms"), results);
  plots.ttft_vs_ep = latency_vs_ep_plot(opt.out_dir + "/plots", "p99_ttft_ms", slo_of("p99_ttft_ms"), results);
  if (an.recommended)
    plots.timeline = timeline_svg(spec, results[*an.recommended], opt.out_dir, plots.timeline_caption);
  else {
    plots.timeline_caption = "No recommendation, so no timeline.";
    plots.timeline =
        timeline_plot(opt.out_dir + "/plots", json::object({{"traceEvents", json::array()}}), 2, "no recommendation");
  }
  return plots;
}

/** The best point per hardware and the recommendation on stdout; the count of points that ran. */
std::size_t print_plan_summary(const std::vector<PlanPoint>& points, const std::vector<PointResult>& results,
                               const PlanAnalysis& an, std::size_t& slo_ok)
{
  std::size_t ok = 0;
  slo_ok         = 0;
  for (const auto& a : an.points) {
    ok += a.ok;
    slo_ok += a.slo_ok;
  }
  for (const auto& [hw, i] : an.best_per_hw)
    fmt::print("{:>6}: {} GPUs (point {}: {})\n", hw, an.points[i].gpus_for_demand, i, points[i].label());
  if (an.recommended)
    fmt::print("recommended: {} GPUs of {} (point {})\n", an.points[*an.recommended].gpus_for_demand,
               results[*an.recommended].hardware, *an.recommended);
  else
    fmt::print("no point meets the SLOs\n");
  return ok;
}

} // namespace

int plan_command(const PlanOptions& opt)
{
  const auto t0 = std::chrono::steady_clock::now();
  const StopOnSignal stop; // a stopped plan writes no report (stopped_plan)
  for (const char* f : {"points.csv", "report.md", "report.html", "points.partial.csv"})
    fs::remove(opt.out_dir + "/" + f); // an earlier run's must not pass for this one's
  MpiSession mpi;
  const std::string scratch = fmt::format("{}/ranks/{}", opt.out_dir, mpi.rank());
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  const PlanSpec spec = load_plan(opt.plan, scratch);
  const auto points   = enumerate_points(spec);

  std::vector<PlanPoint> mine;
  for (const PlanPoint& p : points)
    if (static_cast<int>(p.index % static_cast<std::size_t>(mpi.size())) == mpi.rank())
      mine.push_back(p);
  // Default: the cores this rank may run on; where mpirun bound it (its default for a few ranks a node: one core
  // each) those are its own, else the machine's shared by the node's ranks.
  const int cores = usable_cores();
  const int jobs  = opt.jobs > 0 ? opt.jobs : std::max(1, bound_to_fewer_cores() ? cores : cores / mpi.local_size());
  if (mpi.rank() == 0) {
    fmt::print(stderr, "dbosim plan: {} points over {} rank(s), {} at once per rank\n", points.size(), mpi.size(),
               jobs);
    if (!spec.dropped.empty())
      fmt::print(stderr, "dbosim plan: {}\n", dropped_line(spec));
  }
  const json share = run_share(spec, mine, scratch, jobs, opt.engine);
  const auto all   = mpi.gather(share.dump());
  if (mpi.rank() != 0)
    return 0;

  bool any_not_run                       = false;
  const std::vector<PointResult> results = gather_results(spec, points, all, any_not_run);
  if (const int sig = StopOnSignal::requested())
    return stopped_plan(opt, results, sig);
  if (any_not_run) // another rank was stopped
    return stopped_plan(opt, results, SIGINT);
  const PlanAnalysis an = analyse(spec, results);

  const PointLaunch launch = an.recommended ? launch_text(spec, results[*an.recommended], opt.out_dir) : PointLaunch{};
  const ModelError err     = plan_error_band(opt, spec, an);
  const ReportPlots plots  = plan_plots(opt, spec, results, an);
  // The three finished files last, each only while no signal came (one that comes between them removes them all).
  const std::pair<const char*, std::string> finished[] = {
      {"points.csv", points_csv(spec, results, an)},
      {"report.md", report_markdown(spec, results, an, err, launch)},
      {"report.html", report_html(spec, results, an, err, plots, launch)}};
  for (const auto& [name, text] : finished) {
    if (const int sig = StopOnSignal::requested())
      return stopped_plan(opt, results, sig);
    write_file_atomic(opt.out_dir + "/" + name, text);
  }
  if (const int sig = StopOnSignal::requested())
    return stopped_plan(opt, results, sig);

  std::size_t slo_ok   = 0;
  const std::size_t ok = print_plan_summary(points, results, an, slo_ok);
  const double secs    = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("wrote {0}/points.csv, {0}/report.md, {0}/report.html ({1} points, {2} ok, {3} meet the SLOs; {4:.0f} "
             "s)\n",
             opt.out_dir, points.size(), ok, slo_ok, secs);
  return ok == points.size() ? 0 : 1;
}

} // namespace dbosim::cli

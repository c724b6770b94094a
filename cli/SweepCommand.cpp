/* dbosim sweep: writes every point of the `sweep:` section as points/NNNN/scenario.yaml and checks each against the
 * parameter table before any runs (a bad value is exit 2 at its sweep line). Under --engine auto or replay (auto is
 * the default) -j worker processes each run a list of points in-process, as `dbosim run` would but without a trace;
 * points with the same step fingerprint go to one worker, one after the other, so that they share their simulated
 * step shapes, and a SimGrid point runs in a child of its worker (one simulation per process). Under --engine simgrid,
 * and for any point a dead worker left, each point is `dbosim run` in its own process, at most -j at once. --resume
 * keeps the points an earlier run finished; SIGINT/SIGTERM stop the workers and points, which are waited for (exit
 * 128 + signal). A progress line goes to stderr when it is a terminal (cli/Progress.hpp); the rows are merged in
 * point order, so sweep.csv is byte-identical whatever -j and whatever the engine. */
#include "cli/Progress.hpp"
#include "cli/ServingCommand.hpp"
#include "cli/StopOnSignal.hpp"

#include "base/AtomicFile.hpp"
#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "base/SelfExe.hpp"
#include "cli/Commands.hpp"
#include "config/InputFile.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/SweepAxes.hpp"
#include "config/YamlMap.hpp"
#include "serving/PointDiskCache.hpp"
#include "serving/StepDiskCache.hpp"
#include "sim/engine/StepEngine.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

namespace dbosim::cli {

namespace {

using json   = nlohmann::ordered_json;
namespace fs = std::filesystem;

/** One point's scenario: the file without its sweep:, the point's values set, paths made absolute. */
std::string point_yaml(const YAML::Node& root, const std::vector<SweepAxis>& axes, const std::vector<std::size_t>& idx,
                       const fs::path& scenario_dir)
{
  YAML::Node node = YAML::Clone(root);
  node.remove("sweep");
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (std::size_t k = 0; k < axes[a].keys.size(); ++k)
      set_sweep_key(node, axes[a].keys[k], axes[a].values[idx[a]][k], axes[a].origin);
  absolutize_paths(node, scenario_dir.string());
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

/** `dbosim run` on one point in a child process, its output in the point's log.txt. */
sim::ChildProcess start_point(const std::string& exe, const std::string& yaml, const std::string& dir,
                              bool single_oracle_job)
{
  return sim::ChildProcess([&]() -> std::string {
    const int fd = open((dir + "/log.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    if (single_oracle_job)
      setenv("DBOSIM_ORACLE_JOBS", "1", 1);
    execl(exe.c_str(), exe.c_str(), "run", yaml.c_str(), "--out", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  });
}

const char* const serving_cols[] = {"mean_ttft_ms",
                                    "median_ttft_ms",
                                    "p99_ttft_ms",
                                    "mean_tpot_ms",
                                    "mean_itl_ms",
                                    "median_itl_ms",
                                    "p90_itl_ms",
                                    "p99_itl_ms",
                                    "request_throughput",
                                    "output_throughput",
                                    "output_throughput_per_gpu",
                                    "output_throughput_per_user",
                                    "preemptions"};

std::string scalar_text(const YAML::Node& n) { return n.IsScalar() ? n.as<std::string>() : "?"; }

/** @brief Removes points/NNNN folders an earlier, larger sweep into the same --out left past `count`. */
void remove_stale_points(const std::string& points_dir, std::size_t count)
{
  std::error_code ec;
  if (!fs::is_directory(points_dir, ec))
    return;
  for (const auto& entry : fs::directory_iterator(points_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool numbered    = !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
    if (numbered && name.size() < 10 && std::stoul(name) >= count)
      fs::remove_all(entry.path(), ec);
  }
}

/** @brief An earlier run finished this point: the same point scenario, and a summary.json (written last, atomically)
 *  that parses as a JSON object. A missing, truncated or edited summary, or another scenario's, is run again. */
bool finished_point(const std::string& dir, const std::string& yaml)
{
  std::error_code ec;
  if (!fs::is_regular_file(dir + "/summary.json", ec) || !fs::is_regular_file(dir + "/scenario.yaml", ec))
    return false;
  try {
    if (read_input_file(dir + "/scenario.yaml") != yaml)
      return false;
    const json summary = json::parse(read_input_file(dir + "/summary.json"), nullptr, false);
    return summary.is_object() && !summary.empty();
  } catch (const InputError&) {
    return false;
  }
}

/** @brief Loads one point's scenario (every key against the parameter table and the cross rules) before any point
 *  runs and returns its Scenario::step_fingerprint; a bad value is reported at the sweep line of the axis holding the
 *  offending key (else the first axis). */
std::string check_point(const std::string& file, const std::string& scenario, const std::vector<SweepAxis>& axes,
                        const std::vector<std::size_t>& idx, std::size_t index)
{
  try {
    return load_scenario(file).step_fingerprint;
  } catch (const InputError& e) {
    std::string what = e.what();
    if (what.rfind(file, 0) == 0)
      what = what.substr(file.size());
    int line = 0, col = 0, used = 0;
    if (std::sscanf(what.c_str(), ":%d:%d: %n", &line, &col, &used) == 2 && used > 0)
      what = what.substr(static_cast<std::size_t>(used));
    else if (what.rfind(": ", 0) == 0)
      what = what.substr(2);
    std::size_t axis = 0;
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (const std::string& k : axes[a].keys)
        if (k == e.key() || k.substr(k.find('.') + 1) == e.key())
          axis = a;
    std::string label;
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (std::size_t k = 0; k < axes[a].keys.size(); ++k)
        label +=
            fmt::format("{}{}={}", label.empty() ? "" : ", ", axes[a].keys[k], scalar_text(axes[a].values[idx[a]][k]));
    throw InputError(scenario, axes[axis].origin.line, axes[axis].origin.col, "sweep",
                     fmt::format("point {} ({}) is not a valid scenario: {}", index, label, what));
  }
}

/** @brief What a worker sends per finished point (one write, atomic on a pipe). */
struct PointDone {
  std::uint32_t index = 0;
  std::int32_t rc     = 0;
};

/** @brief Keeps a finished point's output files (every file of its folder but its scenario.yaml, whose text is in the
 *  key) in the point cache with the inputs its run read; a failed write leaves the cache colder, nothing else. */
void store_point(const std::string& key, const std::string& dir, std::map<std::string, std::uint64_t> inputs)
{
  const std::string own = dir + "/scenario.yaml";
  inputs.erase(own);
  for (const auto& [path, h] : inputs)
    if (path.find('\n') != std::string::npos)
      return; // not a name an entry's line can hold
  std::vector<serving::PointFile> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "scenario.yaml" || !entry.is_regular_file(ec))
      continue;
    try {
      files.emplace_back(name, read_input_file(entry.path().string(), max_trace_file_bytes));
    } catch (const InputError&) {
      return;
    }
  }
  if (ec)
    return;
  // summary.json last: restored last, it marks the point finished (finished_point)
  std::stable_partition(files.begin(), files.end(), [](const auto& f) { return f.first != "summary.json"; });
  serving::PointDiskCache(serving::step_cache_dir()).store(key, inputs, files);
}

/** @brief Writes a point's files from its cache entry into its folder (summary.json last) and notes in its log.txt
 *  where they came from. */
void restore_point(const std::string& dir, const std::string& entry, const std::vector<serving::PointFile>& files)
{
  for (const auto& [name, bytes] : files)
    write_file_atomic(dir + "/" + name, name == "log.txt"
                                            ? bytes + fmt::format("dbosim sweep: this point's result is the run above, "
                                                                  "read from the point cache {}\n",
                                                                  entry)
                                            : bytes);
}

/** @brief A worker process's body: runs `mine` in order, each as `dbosim run POINT --out DIR --engine E` would (its
 *  output in its log.txt, its summary.json; no trace.json), and sends a PointDone per point on `done_fd`. SimGrid
 *  points run in children of the worker (sim/engine/StepEngine's auto), so one worker runs any number of points. */
std::string run_points_here(const std::vector<std::size_t>& mine, const std::vector<std::string>& dirs,
                            const std::vector<std::string>& keys, const std::string& engine, int done_fd)
{
  signal(SIGINT, SIG_DFL); // the sweep's flag handler is the parent's; a worker just stops
  signal(SIGTERM, SIG_DFL);
  setenv("DBOSIM_ORACLE_JOBS", "1", 1); // the workers already fill the cores
  for (const std::size_t i : mine) {
    std::fflush(stdout);
    std::fflush(stderr);
    if (const int fd = open((dirs[i] + "/log.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644); fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    int rc = 1;
    const InputDigest inputs; // the files the point's run reads, for its entry in the point cache
    try {
      RunOptions ro;
      ro.scenario     = dirs[i] + "/scenario.yaml";
      ro.out_dir      = dirs[i];
      ro.engine       = engine;
      ro.write_trace  = false;
      ro.share_shapes = true;
      rc              = run_command(ro);
    } catch (const InputError& e) { // as main() reports it
      fmt::print(stderr, "dbosim: error: {}\n", e.what());
      rc = 2;
    } catch (const std::exception& e) {
      fmt::print(stderr, "dbosim: internal error: {}\n", e.what());
      rc = 1;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    if (rc == 0 && !keys[i].empty())
      store_point(keys[i], dirs[i], inputs.files());
    const PointDone d{static_cast<std::uint32_t>(i), rc};
    if (write(done_fd, &d, sizeof d) != static_cast<ssize_t>(sizeof d))
      _exit(1);
  }
  return {};
}

/** @brief The points to run split into `workers` lists: points with the same step fingerprint in one list, one after
 *  the other (they share their simulated step shapes there, EngineOracle keeping one group's at a time), the largest
 *  groups first onto the least-loaded list; in a list, groups by their first point. */
std::vector<std::vector<std::size_t>> assign_points(const std::vector<std::size_t>& todo,
                                                    const std::vector<std::string>& fingerprint, int workers)
{
  std::map<std::string, std::vector<std::size_t>> groups;
  std::vector<std::vector<std::size_t>> alone; // no fingerprint: shares nothing
  for (const std::size_t i : todo)
    if (fingerprint[i].empty())
      alone.push_back({i});
    else
      groups[fingerprint[i]].push_back(i);
  for (auto& [fp, g] : groups)
    alone.push_back(std::move(g));
  std::stable_sort(alone.begin(), alone.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  const std::size_t n = static_cast<std::size_t>(std::max(1, workers));
  std::vector<std::vector<const std::vector<std::size_t>*>> lists(n);
  std::vector<std::size_t> load(n, 0);
  for (const auto& g : alone) {
    const std::size_t w = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    lists[w].push_back(&g);
    load[w] += g.size();
  }
  std::vector<std::vector<std::size_t>> out(n);
  for (std::size_t w = 0; w < n; ++w) {
    std::sort(lists[w].begin(), lists[w].end(), [](const auto* a, const auto* b) { return a->front() < b->front(); });
    for (const auto* g : lists[w])
      out[w].insert(out[w].end(), g->begin(), g->end());
  }
  out.erase(std::remove_if(out.begin(), out.end(), [](const auto& w) { return w.empty(); }), out.end());
  return out;
}

/** @brief Runs each list of `lists` in a worker process (run_points_here), sets rc[i] and counts `done` as points
 *  finish; stops the workers on SIGINT/SIGTERM (StopOnSignal). A point a dead worker did not finish keeps rc -1. */
void run_in_workers(const std::vector<std::vector<std::size_t>>& lists, const std::vector<std::string>& dirs,
                    const std::vector<std::string>& keys, const std::string& engine, std::vector<int>& rc,
                    std::size_t& done, Progress& bar, std::size_t resumed)
{
  int fds[2];
  if (pipe(fds) != 0)
    throw InternalError("dbosim sweep: cannot create the workers' pipe");
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  std::vector<sim::ChildProcess> workers;
  for (const auto& list : lists)
    workers.emplace_back([&] {
      close(fds[0]);
      return run_points_here(list, dirs, keys, engine, fds[1]);
    });
  close(fds[1]);
  auto drain = [&] {
    PointDone d;
    while (read(fds[0], &d, sizeof d) == static_cast<ssize_t>(sizeof d))
      if (d.index < rc.size() && rc[d.index] < 0) {
        rc[d.index] = d.rc;
        bar.update(++done, resumed);
      }
  };
  std::vector<bool> ended(workers.size(), false);
  std::size_t running = workers.size();
  while (running > 0) {
    if (StopOnSignal::requested()) {
      for (std::size_t w = 0; w < workers.size(); ++w)
        if (!ended[w])
          workers[w].kill(StopOnSignal::requested());
      for (std::size_t w = 0; w < workers.size(); ++w)
        if (!ended[w])
          workers[w].wait();
      break;
    }
    drain();
    bool any = false;
    for (std::size_t w = 0; w < workers.size(); ++w)
      if (!ended[w] && workers[w].try_wait()) {
        ended[w] = any = true;
        --running;
      }
    if (!any)
      usleep(20000);
  }
  drain(); // what the workers wrote before they ended
  close(fds[0]);
}

/** Each point's folder, exit code (-1: not run yet; 0 for a point an earlier run finished under --resume or the point
 *  cache held), step fingerprint (the points a worker runs together) and point-cache key. */
struct SweepPoints {
  std::vector<std::vector<std::size_t>> indices; ///< per point, each axis's value
  std::vector<std::string> dirs;
  std::vector<int> rc;
  std::vector<std::string> fingerprint;
  std::vector<std::string> keys; ///< per point, its key in the point cache (empty: not kept there)
  std::string cache_dir;         ///< the point cache's folder (serving/PointDiskCache); empty: none
  std::size_t resumed = 0;       ///< points an earlier run finished (--resume)
  std::size_t cached  = 0;       ///< points read from the point cache
};

/** Writes each point's scenario.yaml (unless --resume finds it finished, or the point cache of the --step-cache
 *  folder holds its result: then its files come from there) and checks it against the parameter table. */
void write_points(const SweepOptions& opt, sim::EngineKind engine, const YAML::Node& root,
                  const std::vector<SweepAxis>& axes, const fs::path& scenario_dir, SweepPoints& pts)
{
  const std::size_t count = pts.indices.size();
  pts.rc.assign(count, -1);
  pts.fingerprint.assign(count, "");
  pts.keys.assign(count, "");
  // points run in the workers are kept in the point cache, and a point found there is not run again
  pts.cache_dir = engine != sim::EngineKind::simgrid ? serving::step_cache_dir() : std::string();
  std::optional<serving::PointDiskCache> cache;
  if (!pts.cache_dir.empty())
    cache.emplace(pts.cache_dir);
  for (std::size_t i = 0; i < count; ++i) {
    pts.dirs.push_back(fmt::format("{}/points/{:04d}", opt.out_dir, i));
    const std::string yaml = point_yaml(root, axes, pts.indices[i], scenario_dir);
    const std::string file = pts.dirs.back() + "/scenario.yaml";
    if (opt.resume && finished_point(pts.dirs.back(), yaml)) {
      pts.rc[i] = 0; // an earlier run of this very point wrote its summary
      ++pts.resumed;
      continue;
    }
    fs::remove(pts.dirs.back() + "/summary.json"); // a stale summary must not pass for this run's
    write_file_atomic(file, yaml);
    if (cache) {
      pts.keys[i] = serving::point_key(yaml, opt.engine);
      std::string note;
      if (const auto files = cache->find(pts.keys[i], note)) {
        restore_point(pts.dirs.back(), cache->entry_path(pts.keys[i]), *files);
        pts.rc[i] = 0;
        ++pts.cached;
        continue;
      }
      if (!note.empty())
        fmt::print(stderr, "dbosim sweep: point {}: {}\n", i, note);
    }
    pts.fingerprint[i] = check_point(file, opt.scenario, axes, pts.indices[i], i);
  }
}

/** Runs every point not finished: in -j workers (replay or auto), then each left one as `dbosim run` in its own
 *  process, at most -j at once. 0, or 128 + the signal that stopped it (every running point waited for); the caller
 *  holds the StopOnSignal. */
int run_points(const SweepOptions& opt, sim::EngineKind engine, int jobs, const std::string& exe, SweepPoints& pts)
{
  const std::size_t count = pts.indices.size();
  std::vector<int>& rc    = pts.rc;
  std::size_t done = static_cast<std::size_t>(std::count(rc.begin(), rc.end(), 0)), next = 0;
  if (pts.resumed > 0)
    fmt::print(stderr, "resuming: {} of {} points already finished\n", pts.resumed, count);
  if (pts.cached > 0)
    fmt::print(stderr, "point cache: {} of {} points read from {}, not run again\n", pts.cached, count, pts.cache_dir);
  std::vector<std::pair<sim::ChildProcess, std::size_t>> running;
  const std::size_t resumed = done;
  Progress bar("sweep points", count);
  bar.update(done, resumed);
  if (engine != sim::EngineKind::simgrid) { // many points per worker process; what a dead worker left runs below
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < count; ++i)
      if (rc[i] != 0)
        todo.push_back(i);
    run_in_workers(assign_points(todo, pts.fingerprint, jobs), pts.dirs, pts.keys, opt.engine, rc, done, bar, resumed);
  }
  while (done < count && !StopOnSignal::requested()) {
    while (next < count && static_cast<int>(running.size()) < jobs && !StopOnSignal::requested()) {
      if (rc[next] < 0) // not run yet (a worker's points have their exit code)
        running.emplace_back(start_point(exe, pts.dirs[next] + "/scenario.yaml", pts.dirs[next], jobs > 1), next);
      ++next;
    }
    bool ended = false;
    for (auto it = running.begin(); it != running.end() && !ended;) {
      if (const std::optional<sim::ChildResult> r = it->first.try_wait()) {
        rc[it->second] = r->exit_code; // 128 + signal for a point killed by one
        it             = running.erase(it);
        bar.update(++done, resumed);
        ended = true;
      } else {
        ++it;
      }
    }
    if (!ended)
      usleep(20000); // polled, so that a signal between the check and the wait is never missed
  }
  if (const int sig = StopOnSignal::requested()) {
    // Forward the signal to every running point and wait for each, so that none is left writing once we exit.
    for (auto& [child, i] : running)
      child.kill(sig);
    for (auto& [child, i] : running)
      child.wait();
    fmt::print(stderr, "\ndbosim sweep: stopped by signal {} ({} of {} points finished; --resume keeps them)\n", sig,
               done, count);
    return 128 + sig;
  }
  return 0;
}

/** sweep.csv's columns and rows, in point order: the point, its axis values, its status, then its summary's figures
 *  (serving's when any point is a serving run). */
struct SweepTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  bool serving = false;
  int failed   = 0;
};

SweepTable sweep_table(const std::vector<SweepAxis>& axes, const SweepPoints& pts)
{
  const std::size_t count    = pts.indices.size();
  const std::vector<int>& rc = pts.rc;
  SweepTable t;
  std::vector<std::string>& header = t.header;
  header.push_back("point");
  for (const SweepAxis& a : axes)
    header.insert(header.end(), a.keys.begin(), a.keys.end());
  header.push_back("status");
  std::vector<json> summaries(count);
  for (std::size_t i = 0; i < count; ++i)
    if (rc[i] == 0) {
      summaries[i] = json::parse(read_input_file(pts.dirs[i] + "/summary.json"));
      t.serving    = t.serving || summaries[i].contains("serving");
    }
  if (t.serving)
    header.insert(header.end(), std::begin(serving_cols), std::end(serving_cols));
  else
    header.insert(header.end(), {"step_time_us", "exposed_comm_us"});

  for (std::size_t i = 0; i < count; ++i) {
    std::vector<std::string> row{fmt::format("{}", i)};
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (const YAML::Node& v : axes[a].values[pts.indices[i][a]])
        row.push_back(scalar_text(v));
    row.push_back(rc[i] == 0 ? "ok" : fmt::format("failed({}): see {}/log.txt", rc[i], pts.dirs[i]));
    t.failed += rc[i] != 0;
    const std::size_t metrics = header.size() - row.size();
    for (std::size_t k = 0; k < metrics; ++k) {
      const std::string& col = header[row.size()];
      const json& s          = summaries[i];
      const json* v          = nullptr;
      if (rc[i] == 0)
        v = t.serving ? (s.contains("serving") && s["serving"].contains(col) ? &s["serving"][col] : nullptr)
                      : (s.contains(col) ? &s[col] : nullptr);
      row.push_back(!v ? "" : v->is_number_float() ? fmt::format("{:.3f}", v->get<double>()) : v->dump());
    }
    t.rows.push_back(row);
  }
  return t;
}

std::string sweep_csv(const SweepTable& t)
{
  std::string csv;
  for (const auto& r : std::vector<std::vector<std::string>>{t.header}) {
    for (std::size_t k = 0; k < r.size(); ++k)
      csv += (k ? "," : "") + r[k];
    csv += "\n";
  }
  for (const auto& r : t.rows) {
    for (std::size_t k = 0; k < r.size(); ++k)
      csv += (k ? "," : "") + (r[k].find(',') != std::string::npos ? "\"" + r[k] + "\"" : r[k]);
    csv += "\n";
  }
  return csv;
}

/** The printed table: axis values and the headline figures. */
void print_sweep_table(const std::vector<SweepAxis>& axes, const SweepTable& t)
{
  const std::vector<std::string>& header = t.header;
  const bool serving                     = t.serving;
  std::size_t key_columns                = 0;
  for (const SweepAxis& a : axes)
    key_columns += a.keys.size();
  std::vector<std::size_t> show;
  for (std::size_t k = 1; k < header.size(); ++k)
    if (k <= key_columns + 1 ||
        (serving ? (header[k] == "median_ttft_ms" || header[k] == "median_itl_ms" || header[k] == "p99_itl_ms" ||
                    header[k] == "output_throughput" || header[k] == "output_throughput_per_gpu" ||
                    header[k] == "output_throughput_per_user")
                 : true))
      show.push_back(k);
  std::vector<std::string> labels;
  for (const std::string& h : header) { // short column labels: a key's leaf, vLLM's throughputs as tok/s
    static const std::map<std::string, std::string> short_names{{"output_throughput", "tok/s"},
                                                                {"output_throughput_per_gpu", "tok/s/gpu"},
                                                                {"output_throughput_per_user", "tok/s/user"},
                                                                {"median_ttft_ms", "ttft_p50_ms"},
                                                                {"median_itl_ms", "itl_p50_ms"},
                                                                {"p99_itl_ms", "itl_p99_ms"}};
    auto it = short_names.find(h);
    labels.push_back(it != short_names.end() ? it->second : h.substr(h.rfind('.') + 1));
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t k : show) {
    width[k] = labels[k].size();
    for (const auto& r : t.rows)
      width[k] = std::max(width[k], std::min<std::size_t>(r[k].size(), 24));
  }
  auto print_row = [&](const std::vector<std::string>& r) {
    std::string line;
    for (std::size_t k : show)
      line += fmt::format("{:>{}}  ", r[k].substr(0, 24), width[k]);
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    fmt::print("{}\n", line);
  };
  print_row(labels);
  for (const auto& r : t.rows)
    print_row(r);
}

} // namespace

int sweep_command(const SweepOptions& opt)
{
  const Scenario base = load_scenario(opt.scenario); // validates the file and the sweep's shape
  if (base.sweep_axes == 0)
    throw InputError(opt.scenario, 0, 0, "sweep", "the scenario has no sweep: section", "{key: [values], ...}");
  const YAML::Node root = load_yaml_file(opt.scenario);
  YamlMap top(root, opt.scenario, "");
  const std::vector<SweepAxis> axes = parse_sweep_axes(top, "sweep");
  const fs::path scenario_dir       = fs::path(opt.scenario).parent_path();
  SweepPoints pts;
  pts.indices           = sweep_point_indices(axes);
  const long cores      = sysconf(_SC_NPROCESSORS_ONLN);
  const int jobs        = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1L, cores));
  const std::string exe = opt.dbosim.empty() ? self_exe("dbosim sweep") : opt.dbosim;

  remove_stale_points(opt.out_dir + "/points", pts.indices.size());
  fs::remove(opt.out_dir + "/sweep.csv"); // an earlier run's table must not pass for this one's if this one stops
  const sim::EngineKind engine = sim::engine_from_option(opt.engine);
  write_points(opt, engine, root, axes, scenario_dir, pts);
  const StopOnSignal stop;
  if (const int stopped = run_points(opt, engine, jobs, exe, pts))
    return stopped;

  const SweepTable table = sweep_table(axes, pts);
  write_file_atomic(opt.out_dir + "/sweep.csv", sweep_csv(table));
  print_sweep_table(axes, table);
  fmt::print("wrote {}/sweep.csv ({} points, {} failed)\n", opt.out_dir, pts.indices.size(), table.failed);
  return table.failed ? 1 : 0;
}

} // namespace dbosim::cli

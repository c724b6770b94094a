/* dbosim sweep: writes every point of the `sweep:` section as points/NNNN/scenario.yaml and checks each against the
 * parameter table before any runs (a bad value is exit 2 at its sweep line). Under --engine auto or replay (auto is
 * the default) -j worker processes run the points in-process, as `dbosim run` would but without a trace, each taking
 * the next group of points as it finishes one (the groups with the most work first): points with the same step
 * fingerprint are one group, run one after the other, so that they share their simulated step shapes; a SimGrid point
 * runs in a child of its worker (one simulation per process). Under --engine simgrid,
 * and for any point a dead worker left, each point is `dbosim run` in its own process, at most -j at once. --resume
 * keeps the points an earlier run finished; SIGINT/SIGTERM stop the workers and points, which are waited for (exit
 * 128 + signal). A progress line goes to stderr when it is a terminal (cli/Progress.hpp); the rows are merged in
 * point order, so sweep.csv is byte-identical whatever -j and whatever the engine. --table-only (one-step sweeps)
 * writes no point folders: each worker builds its points' scenarios in memory, prices them with nothing printed and
 * sends sweep.csv's cells back (sweep_table_only). */
#include "cli/Progress.hpp"
#include "cli/ServingCommand.hpp"
#include "cli/StopOnSignal.hpp"

#include "base/AtomicFile.hpp"
#include "base/ChildProcess.hpp"
#include "base/Cores.hpp"
#include "base/InputError.hpp"
#include "base/SelfExe.hpp"
#include "cli/Commands.hpp"
#include "cli/EngineRun.hpp"
#include "config/InputFile.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/SweepAxes.hpp"
#include "config/YamlMap.hpp"
#include "models/CostExplain.hpp"
#include "serving/PointDiskCache.hpp"
#include "serving/StepDiskCache.hpp"
#include "sim/engine/StepEngine.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

namespace dbosim::cli {

namespace {

using json   = nlohmann::ordered_json;
namespace fs = std::filesystem;

/** One point's scenario tree: the file without its sweep:, the point's values set, paths made absolute. */
YAML::Node point_node(const YAML::Node& root, const std::vector<SweepAxis>& axes, const std::vector<std::size_t>& idx,
                      const fs::path& scenario_dir)
{
  YAML::Node node = YAML::Clone(root);
  node.remove("sweep");
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (std::size_t k = 0; k < axes[a].keys.size(); ++k)
      set_sweep_key(node, axes[a].keys[k], axes[a].values[idx[a]][k], axes[a].origin);
  absolutize_paths(node, scenario_dir.string());
  return node;
}

/** One point's scenario.yaml: point_node as text. */
std::string point_yaml(const YAML::Node& root, const std::vector<SweepAxis>& axes, const std::vector<std::size_t>& idx,
                       const fs::path& scenario_dir)
{
  YAML::Emitter out;
  out << point_node(root, axes, idx, scenario_dir);
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

/** A figure of a point's summary as sweep.csv writes it. */
std::string figure_cell(const json* v)
{
  return !v ? "" : v->is_number_float() ? fmt::format("{:.3f}", v->get<double>()) : v->dump();
}

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

/** @brief The error of a point whose scenario (named `file` in its messages) does not load: `what` and `key` of its
 *  InputError, reported at the sweep line of the axis holding the offending key (else the first axis). */
InputError point_error(std::string what, const std::string& key, const std::string& file, const std::string& scenario,
                       const std::vector<SweepAxis>& axes, const std::vector<std::size_t>& idx, std::size_t index)
{
  const std::size_t axis = axis_of_key(axes, key);
  std::string label;
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (std::size_t k = 0; k < axes[a].keys.size(); ++k)
      label +=
          fmt::format("{}{}={}", label.empty() ? "" : ", ", axes[a].keys[k], scalar_text(axes[a].values[idx[a]][k]));
  return InputError(scenario, axes[axis].origin.line, axes[axis].origin.col, "sweep",
                    fmt::format("point {} ({}) is not a valid scenario: {}", index, label,
                                message_without_location(std::move(what), file)));
}

/** @brief What a point's scenario says before it runs: the step fingerprint it shares shapes under, and its work, what
 *  the workers start first: a serving point's time grows with its requests (workload.num_prompts; 1 for a one-step
 *  point) and its DP ranks (each one's own work is priced at every step). */
struct PointCheck {
  std::string fingerprint;
  double work = 1;
};

/** @brief Loads one point's scenario (every key against the parameter table and the cross rules) before any point
 *  runs; a bad value is reported at the sweep line of the axis holding the offending key (else the first axis). */
PointCheck check_point(const std::string& file, const std::string& scenario, const std::vector<SweepAxis>& axes,
                       const std::vector<std::size_t>& idx, std::size_t index)
{
  try {
    const Scenario s = load_scenario(file);
    return {s.step_fingerprint, static_cast<double>(std::max(1, s.requests.num_prompts)) * std::max(1, s.parallel.dp)};
  } catch (const InputError& e) {
    throw point_error(e.what(), e.key(), file, scenario, axes, idx, index);
  }
}

/** @brief What a worker sends per finished point (one write, atomic on a pipe). */
struct PointDone {
  std::uint32_t index = 0;
  std::int32_t rc     = 0;
};

/** @brief A worker tells the parent that point `i` ended with `rc`; a worker whose parent is gone stops. */
void send_done(int done_fd, std::size_t i, int rc)
{
  const PointDone d{static_cast<std::uint32_t>(i), rc};
  if (write(done_fd, &d, sizeof d) != static_cast<ssize_t>(sizeof d))
    _exit(1);
}

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
    send_done(done_fd, i, rc);
  }
  serving::save_step_disk_tables(); // the group's shapes, once (the points' oracles share them and leave it to here)
  return {};
}

/** The inputs a --table-only worker prices its points from: the parent's, inherited through the fork. */
struct PointSource {
  const YAML::Node& root; ///< the scenario file, its sweep: removed or not
  const std::vector<SweepAxis>& axes;
  const std::vector<std::vector<std::size_t>>& indices;
  fs::path scenario_dir;
  std::string out_dir;
  sim::EngineKind engine;
};

/** The name a point's scenario has in messages: its scenario.yaml's path had the sweep written it. */
std::string point_label(const std::string& out_dir, std::size_t i)
{
  return fmt::format("{}/points/{:04d}/scenario.yaml", out_dir, i);
}

/** What a --table-only worker found for one point. */
struct PointFigures {
  int rc          = -1;    ///< 0 priced; 2 bad input; 1 failed otherwise; -1 not priced (its worker stopped first)
  bool load_error = false; ///< the point's scenario does not load: `cells` are its error's what() and key
  std::vector<std::string> cells; ///< rc 0: step_time_us and exposed_comm_us as sweep.csv writes them; else the error
};

/** step_figures without the cost explanations (their numbers are the same: models/CostExplain.hpp); a point that
 *  fails is priced again with them, for its error message to quote them as `dbosim run`'s does. */
json quiet_step_figures(const Scenario& s, sim::EngineKind engine)
{
  try {
    const models::QuietCosts quiet;
    return step_figures(s, engine);
  } catch (const std::exception&) {
    return step_figures(s, engine);
  }
}

/** One point loaded from memory and priced as `dbosim run` prices its step (the same engine choice), with nothing
 *  printed and no file written. A serving point is a load error: --table-only prices one-step points. */
PointFigures price_point(const PointSource& src, std::size_t i)
{
  PointFigures f;
  const std::string label = point_label(src.out_dir, i);
  std::optional<Scenario> s;
  try {
    // one-step points share no step shapes: no fingerprint
    s.emplace(load_scenario_unshared(point_node(src.root, src.axes, src.indices[i], src.scenario_dir), label));
    if (has_serving_workload(*s))
      throw InputError(label, "it is a serving run (workload.num_prompts or workload.trace), and --table-only prices "
                              "one-step points: run the sweep without --table-only");
  } catch (const InputError& e) {
    f.rc         = 2;
    f.load_error = true;
    f.cells      = {e.what(), e.key()};
    return f;
  }
  try {
    const json fig = quiet_step_figures(*s, src.engine);
    for (const char* col : {"step_time_us", "exposed_comm_us"})
      f.cells.push_back(figure_cell(fig.contains(col) ? &fig[col] : nullptr));
    f.rc = 0;
  } catch (const InputError& e) { // as `dbosim run` exits
    f.rc    = 2;
    f.cells = {e.what()};
  } catch (const std::exception& e) {
    f.rc    = 1;
    f.cells = {e.what()};
  }
  return f;
}

/** A length-prefixed field ("5:hello") of a worker's reply. */
void put_field(std::string& out, const std::string& field) { out += fmt::format("{}:", field.size()) + field; }

/** The next field of `in` at `at` (moved past it); false at the end or on a malformed field. */
bool take_field(const std::string& in, std::size_t& at, std::string& field)
{
  const std::size_t colon = in.find(':', at);
  if (colon == std::string::npos || colon == at || colon - at > 12)
    return false;
  const std::size_t n = std::stoul(in.substr(at, colon - at));
  if (n > in.size() - colon - 1)
    return false;
  field = in.substr(colon + 1, n);
  at    = colon + 1 + n;
  return true;
}

/** One point's record in a worker's reply: its index, rc, load_error and cells. */
void put_figures(std::string& out, std::size_t i, const PointFigures& f)
{
  put_field(out, std::to_string(i));
  put_field(out, std::to_string(f.rc));
  put_field(out, f.load_error ? "1" : "0");
  put_field(out, std::to_string(f.cells.size()));
  for (const std::string& c : f.cells)
    put_field(out, c);
}

/** Reads a worker's reply into `figs` (by point index); a malformed tail is left unread (its points not priced). */
void take_figures(const std::string& reply, std::vector<PointFigures>& figs)
{
  std::size_t at = 0;
  std::string index, rc, load_error, count;
  while (take_field(reply, at, index) && take_field(reply, at, rc) && take_field(reply, at, load_error) &&
         take_field(reply, at, count)) {
    PointFigures f;
    f.rc         = std::stoi(rc);
    f.load_error = load_error == "1";
    f.cells.resize(std::stoul(count));
    for (std::string& c : f.cells)
      if (!take_field(reply, at, c))
        return;
    const std::size_t i = std::stoul(index);
    if (i < figs.size())
      figs[i] = std::move(f);
  }
}

/** A --table-only worker's body: prices `mine` in order (price_point), sends a PointDone per point on `done_fd` for
 *  the progress line, and returns every point's figures (put_figures) as its reply. After a point that does not
 *  load, only lower points are looked at: the sweep stops at its first bad point. */
std::string price_points_here(const std::vector<std::size_t>& mine, const PointSource& src, int done_fd)
{
  signal(SIGINT, SIG_DFL); // the sweep's flag handler is the parent's; a worker just stops
  signal(SIGTERM, SIG_DFL);
  const FixedInputs fixed; // the profiles, models and network facts read once, not again at every point
  std::string reply;
  std::size_t first_bad = SIZE_MAX;
  for (const std::size_t i : mine) {
    if (i > first_bad)
      continue;
    const PointFigures f = price_point(src, i);
    if (f.load_error)
      first_bad = std::min(first_bad, i);
    put_figures(reply, i, f);
    send_done(done_fd, i, f.rc);
  }
  return reply;
}

/** @brief The points of `todo` in groups of one step fingerprint (a point without one alone), the heaviest first
 *  (most work in all, PointCheck::work; ties in point order): the workers take the next group as they finish one,
 *  so that the longest runs start first and none waits at the end behind a static share. */
std::vector<std::vector<std::size_t>> point_groups(const std::vector<std::size_t>& todo,
                                                   const std::vector<std::string>& fingerprint,
                                                   const std::vector<double>& work)
{
  std::map<std::string, std::vector<std::size_t>> by_fingerprint;
  std::vector<std::vector<std::size_t>> groups;
  for (const std::size_t i : todo)
    if (fingerprint[i].empty())
      groups.push_back({i});
    else
      by_fingerprint[fingerprint[i]].push_back(i);
  for (auto& [fp, g] : by_fingerprint)
    groups.push_back(std::move(g));
  auto weight = [&](const std::vector<std::size_t>& g) {
    double w = 0;
    for (const std::size_t i : g)
      w += work[i];
    return w;
  };
  std::sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) {
    const double wa = weight(a), wb = weight(b);
    return wa != wb ? wa > wb : a.front() < b.front();
  });
  return groups;
}

/** @brief `groups` (point_groups: the points sharing a step fingerprint together) split into `workers` lists, each
 *  group onto the least-loaded list in the order given; in a list, groups by their first point. */
std::vector<std::vector<std::size_t>> assign_points(const std::vector<std::vector<std::size_t>>& groups, int workers)
{
  const std::size_t n = static_cast<std::size_t>(std::max(1, workers));
  std::vector<std::vector<const std::vector<std::size_t>*>> lists(n);
  std::vector<std::size_t> load(n, 0);
  for (const auto& g : groups) {
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

/** @brief A counter in memory shared with the forked workers: each takes the next group by incrementing it. */
class SharedCounter {
public:
  SharedCounter()
  {
    void* m = mmap(nullptr, sizeof(Value), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
      throw InternalError("dbosim sweep: cannot map the workers' shared counter");
    value_ = new (m) Value(0);
  }
  ~SharedCounter() { munmap(value_, sizeof(Value)); }
  SharedCounter(const SharedCounter&)            = delete;
  SharedCounter& operator=(const SharedCounter&) = delete;
  std::size_t next() { return static_cast<std::size_t>(value_->fetch_add(1)); }

private:
  using Value = std::atomic<std::uint64_t>;
  static_assert(Value::is_always_lock_free, "a lock-free atomic is address-free: it works across processes");
  Value* value_ = nullptr;
};

/** @brief The -j worker processes: one per list, each running `body(list, write_fd)` and replying on the pipe whose
 *  (non-blocking) read end is `read_fd`. */
struct Workers {
  int read_fd = -1;
  std::vector<sim::ChildProcess> procs;
};
Workers start_workers(const std::vector<std::vector<std::size_t>>& lists,
                      const std::function<std::string(const std::vector<std::size_t>&, int)>& body)
{
  int fds[2];
  if (pipe(fds) != 0)
    throw InternalError("dbosim sweep: cannot create the workers' pipe");
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  Workers w;
  w.read_fd = fds[0];
  for (const auto& list : lists)
    w.procs.emplace_back([&] {
      close(fds[0]);
      return body(list, fds[1]);
    });
  close(fds[1]);
  return w;
}

/** @brief Waits for every worker of `ws`: `drain()` between polls, `on_end(w, result)` as worker w ends; on
 *  SIGINT/SIGTERM (StopOnSignal) the running ones are killed and waited for. Drains once more, closes the pipe and
 *  returns the signal that stopped the sweep (0: none). */
int wait_workers(Workers& ws, const std::function<void()>& drain,
                 const std::function<void(std::size_t, const sim::ChildResult&)>& on_end)
{
  std::vector<bool> ended(ws.procs.size(), false);
  std::size_t running = ws.procs.size();
  int sig             = 0;
  while (running > 0 && (sig = StopOnSignal::requested()) == 0) {
    drain();
    bool any = false;
    for (std::size_t w = 0; w < ws.procs.size(); ++w)
      if (const std::optional<sim::ChildResult> r = ended[w] ? std::nullopt : ws.procs[w].try_wait()) {
        ended[w] = any = true;
        --running;
        on_end(w, *r);
      }
    if (!any)
      usleep(20000); // polled, so that a signal between the check and the wait is never missed
  }
  for (std::size_t w = 0; w < ws.procs.size() && sig; ++w)
    if (!ended[w])
      ws.procs[w].kill(sig);
  for (std::size_t w = 0; w < ws.procs.size() && sig; ++w)
    if (!ended[w])
      ws.procs[w].wait();
  drain(); // what the workers wrote before they ended
  close(ws.read_fd);
  return sig;
}

/** @brief Runs `groups` (point_groups) in `jobs` worker processes (run_points_here), each taking the next group
 *  when it has finished one; sets rc[i] and counts `done` as points finish; stops the workers on SIGINT/SIGTERM
 *  (StopOnSignal). A point a dead worker did not finish keeps rc -1. */
void run_in_workers(const std::vector<std::vector<std::size_t>>& groups, int jobs, const std::vector<std::string>& dirs,
                    const std::vector<std::string>& keys, const std::string& engine, std::vector<int>& rc,
                    std::size_t& done, Progress& bar, std::size_t resumed)
{
  SharedCounter taken;
  const std::size_t workers = std::min(groups.size(), static_cast<std::size_t>(std::max(1, jobs)));
  Workers ws =
      start_workers(std::vector<std::vector<std::size_t>>(workers), [&](const std::vector<std::size_t>&, int done_fd) {
        for (std::size_t g = taken.next(); g < groups.size(); g = taken.next())
          run_points_here(groups[g], dirs, keys, engine, done_fd);
        return std::string();
      });
  wait_workers(
      ws,
      [&] {
        PointDone d;
        while (read(ws.read_fd, &d, sizeof d) == static_cast<ssize_t>(sizeof d))
          if (d.index < rc.size() && rc[d.index] < 0) {
            rc[d.index] = d.rc;
            bar.update(++done, resumed);
          }
      },
      [](std::size_t, const sim::ChildResult&) {});
}

/** Runs each list of `lists` in a --table-only worker (price_points_here), fills `figs` from their replies and counts
 *  `done` as points are priced; 0, or the signal that stopped the sweep (StopOnSignal: every worker killed and waited
 *  for). The points of a worker that died unfinished are failed with its end's message. */
int price_in_workers(const std::vector<std::vector<std::size_t>>& lists, const PointSource& src,
                     std::vector<PointFigures>& figs, std::size_t& done, Progress& bar)
{
  Workers ws = start_workers(
      lists, [&](const std::vector<std::size_t>& list, int done_fd) { return price_points_here(list, src, done_fd); });
  return wait_workers(
      ws,
      [&] {
        PointDone d;
        while (read(ws.read_fd, &d, sizeof d) == static_cast<ssize_t>(sizeof d))
          bar.update(++done, 0);
      },
      [&](std::size_t w, const sim::ChildResult& r) {
        take_figures(r.payload, figs);
        for (const std::size_t i : lists[w])
          if (!r.ok() && figs[i].rc < 0)
            figs[i] = {r.exit_code, false, {"its worker process ended first: " + r.message}};
      });
}

/** Each point's folder, exit code (-1: not run yet; 0 for a point an earlier run finished under --resume or the point
 *  cache held), step fingerprint (the points a worker runs together) and point-cache key. */
struct SweepPoints {
  std::vector<std::vector<std::size_t>> indices; ///< per point, each axis's value
  std::vector<std::string> dirs;
  std::vector<int> rc;
  std::vector<std::string> fingerprint;
  std::vector<std::string> keys; ///< per point, its key in the point cache (empty: not kept there)
  std::vector<double> work;      ///< per point, its work (PointCheck::work)
  std::string cache_dir;         ///< the point cache's folder (serving/PointDiskCache); empty: none
  std::size_t resumed = 0;       ///< points an earlier run finished (--resume)
  std::size_t cached  = 0;       ///< points read from the point cache
};

/** Writes each point's scenario.yaml (unless --resume finds it finished, or the point cache of the --step-cache
 *  folder holds its result: then its files come from there) and checks it against the parameter table. `root`: the
 *  scenario file without its sweep: section. */
void write_points(const SweepOptions& opt, sim::EngineKind engine, const YAML::Node& root,
                  const std::vector<SweepAxis>& axes, const fs::path& scenario_dir, SweepPoints& pts)
{
  const std::size_t count = pts.indices.size();
  pts.rc.assign(count, -1);
  pts.fingerprint.assign(count, "");
  pts.keys.assign(count, "");
  pts.work.assign(count, 1);
  // points run in the workers are kept in the point cache, and a point found there is not run again
  pts.cache_dir = engine != sim::EngineKind::simgrid ? serving::step_cache_dir() : std::string();
  std::optional<serving::PointDiskCache> cache;
  if (!pts.cache_dir.empty())
    cache.emplace(pts.cache_dir);
  const FixedInputs fixed; // the profiles, models and network facts the points name: read once, not at every point
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
    PointCheck c       = check_point(file, opt.scenario, axes, pts.indices[i], i);
    pts.fingerprint[i] = std::move(c.fingerprint);
    pts.work[i]        = c.work;
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
    run_in_workers(point_groups(todo, pts.fingerprint, pts.work), jobs, pts.dirs, pts.keys, opt.engine, rc, done, bar,
                   resumed);
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

/** sweep.csv's first columns: the point, its axes' keys, its status. */
std::vector<std::string> table_header(const std::vector<SweepAxis>& axes)
{
  std::vector<std::string> header{"point"};
  for (const SweepAxis& a : axes)
    header.insert(header.end(), a.keys.begin(), a.keys.end());
  header.push_back("status");
  return header;
}

/** A row's first cells: the point's number and its axis values. */
std::vector<std::string> row_start(const std::vector<SweepAxis>& axes, const std::vector<std::size_t>& idx,
                                   std::size_t i)
{
  std::vector<std::string> row{fmt::format("{}", i)};
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (const YAML::Node& v : axes[a].values[idx[a]])
      row.push_back(scalar_text(v));
  return row;
}

SweepTable sweep_table(const std::vector<SweepAxis>& axes, const SweepPoints& pts)
{
  const std::size_t count    = pts.indices.size();
  const std::vector<int>& rc = pts.rc;
  SweepTable t;
  std::vector<std::string>& header = t.header;
  header                           = table_header(axes);
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
    std::vector<std::string> row = row_start(axes, pts.indices[i], i);
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
      row.push_back(figure_cell(v));
    }
    t.rows.push_back(row);
  }
  return t;
}

/** sweep.csv's table from --table-only's figures: the same columns and cells as sweep_table's for a one-step sweep;
 *  a failed point's status holds its error (there is no log.txt). */
SweepTable figures_table(const std::vector<SweepAxis>& axes, const std::vector<std::vector<std::size_t>>& indices,
                         const std::vector<PointFigures>& figs)
{
  SweepTable t;
  t.header = table_header(axes);
  t.header.insert(t.header.end(), {"step_time_us", "exposed_comm_us"});
  for (std::size_t i = 0; i < figs.size(); ++i) {
    std::vector<std::string> row = row_start(axes, indices[i], i);
    const PointFigures& f        = figs[i];
    if (f.rc == 0 && f.cells.size() == 2) {
      row.push_back("ok");
      row.insert(row.end(), f.cells.begin(), f.cells.end());
    } else {
      std::string why = f.cells.empty() ? std::string("not priced") : f.cells.front();
      std::replace(why.begin(), why.end(), '\n', ' ');
      std::replace(why.begin(), why.end(), '"', '\'');
      row.insert(row.end(), {fmt::format("failed({}): {}", f.rc, why), "", ""});
      ++t.failed;
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

/** --table-only's refusals (exit 2): what it cannot do as the sweep would. */
void check_table_only(const SweepOptions& opt, const Scenario& base, const std::vector<SweepAxis>& axes)
{
  if (opt.resume)
    throw InputError("--table-only", "writes no point folders, so there is nothing for --resume to keep: drop one");
  if (sim::engine_from_option(opt.engine) == sim::EngineKind::simgrid)
    throw InputError("--table-only", "prices the points in -j worker processes, and --engine simgrid runs each point "
                                     "as `dbosim run` in its own process: use --engine auto (SimGrid where the "
                                     "replay is not exact) or drop --table-only");
  bool serving = has_serving_workload(base);
  for (const SweepAxis& a : axes)
    for (const std::string& k : a.keys)
      serving = serving || k == "workload.num_prompts" || k == "workload.trace";
  if (serving)
    throw InputError(opt.scenario, "--table-only prices one-step points, and this sweep's points are serving runs "
                                   "(workload.num_prompts or workload.trace): run it without --table-only");
}

/** `dbosim sweep --table-only`: every point loaded from memory and priced in -j workers, sweep.csv and the printed
 *  table only (no points/ folder is written or removed). A point that does not load is exit 2 at its sweep line, as
 *  without the option, and no sweep.csv is written. `root`: the scenario file without its sweep: section. */
int sweep_table_only(const SweepOptions& opt, const Scenario& base, const YAML::Node& root,
                     const std::vector<SweepAxis>& axes, const std::vector<std::vector<std::size_t>>& indices, int jobs)
{
  check_table_only(opt, base, axes);
  fs::remove(opt.out_dir + "/sweep.csv"); // an earlier run's table must not pass for this one's if this one stops
  const std::size_t count = indices.size();
  const PointSource src{
      root, axes, indices, fs::path(opt.scenario).parent_path(), opt.out_dir, sim::engine_from_option(opt.engine)};
  std::vector<PointFigures> figs(count);
  std::vector<std::size_t> todo(count);
  for (std::size_t i = 0; i < count; ++i)
    todo[i] = i;
  const StopOnSignal stop;
  Progress bar("sweep points", count);
  std::size_t done = 0;
  // one-step points share nothing in a worker (shapes are shared by serving runs only): no fingerprint groups
  if (const int sig = price_in_workers(
          assign_points(point_groups(todo, std::vector<std::string>(count), std::vector<double>(count, 1)), jobs), src,
          figs, done, bar)) {
    fmt::print(stderr, "\ndbosim sweep: stopped by signal {} ({} of {} points priced; no sweep.csv written)\n", sig,
               done, count);
    return 128 + sig;
  }
  for (std::size_t i = 0; i < count; ++i)
    if (figs[i].load_error && figs[i].cells.size() == 2)
      throw point_error(figs[i].cells[0], figs[i].cells[1], point_label(opt.out_dir, i), opt.scenario, axes, indices[i],
                        i);
  const SweepTable table = figures_table(axes, indices, figs);
  write_file_atomic(opt.out_dir + "/sweep.csv", sweep_csv(table));
  print_sweep_table(axes, table);
  fmt::print("wrote {}/sweep.csv ({} points, {} failed)\n", opt.out_dir, count, table.failed);
  return table.failed ? 1 : 0;
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
  // The file without its sweep: once here, not at every point (a point's copy of the file would otherwise hold the
  // whole sweep, which for a sharded plan is one axis of every point: quadratic in the points).
  YAML::Node sweepless = YAML::Clone(root);
  sweepless.remove("sweep");
  const fs::path scenario_dir = fs::path(opt.scenario).parent_path();
  SweepPoints pts;
  pts.indices    = sweep_point_indices(axes);
  const int jobs = opt.jobs > 0 ? opt.jobs : usable_cores();
  if (opt.table_only)
    return sweep_table_only(opt, base, sweepless, axes, pts.indices, jobs);
  const std::string exe = opt.dbosim.empty() ? self_exe("dbosim sweep") : opt.dbosim;

  remove_stale_points(opt.out_dir + "/points", pts.indices.size());
  fs::remove(opt.out_dir + "/sweep.csv"); // an earlier run's table must not pass for this one's if this one stops
  const sim::EngineKind engine = sim::engine_from_option(opt.engine);
  write_points(opt, engine, sweepless, axes, scenario_dir, pts);
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

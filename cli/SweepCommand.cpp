/* dbosim sweep: every point of the `sweep:` section runs as `dbosim run` in its own process (SimGrid allows one
 * simulation per process), at most -j at once, with a progress bar on stderr; the rows are merged in point order, so
 * sweep.csv is byte-identical whatever -j. */
#include "cli/ServingCommand.hpp"

#include "config/AtomicFile.hpp"
#include "config/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/SweepAxes.hpp"
#include "config/YamlMap.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

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
      set_sweep_key(node, axes[a].keys[k], axes[a].values[idx[a]][k]);
  absolutize_paths(node, scenario_dir.string());
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

std::string self_exe()
{
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    throw InternalError("dbosim sweep: cannot find this program (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

pid_t start_point(const std::string& exe, const std::string& yaml, const std::string& dir, bool single_oracle_job)
{
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0)
    throw InternalError("dbosim sweep: fork failed");
  if (pid == 0) {
    const int fd = open((dir + "/log.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    if (single_oracle_job)
      setenv("DBOSIM_ORACLE_JOBS", "1", 1);
    execl(exe.c_str(), exe.c_str(), "run", yaml.c_str(), "--out", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

void progress(std::size_t done, std::size_t total)
{
  constexpr int width = 40;
  const int filled    = total ? static_cast<int>(width * done / total) : width;
  fmt::print(stderr, "\r[{}{}] {}/{} points", std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(width - filled), ' '), done, total);
  if (done == total)
    fmt::print(stderr, "\n");
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

} // namespace

int sweep_command(const SweepOptions& opt)
{
  const Scenario base = load_scenario(opt.scenario); // validates the file and the sweep's shape
  if (base.sweep_axes == 0)
    throw InputError(opt.scenario, 0, 0, "sweep", "the scenario has no sweep: section", "{key: [values], ...}");
  const YAML::Node root = load_yaml_file(opt.scenario);
  YamlMap top(root, opt.scenario, "");
  const std::vector<SweepAxis> axes                    = parse_sweep_axes(top, "sweep");
  const fs::path scenario_dir                          = fs::path(opt.scenario).parent_path();
  const std::vector<std::vector<std::size_t>> points   = sweep_point_indices(axes);
  const long cores      = sysconf(_SC_NPROCESSORS_ONLN);
  const int jobs        = opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1L, cores));
  const std::string exe = opt.dbosim.empty() ? self_exe() : opt.dbosim;

  std::vector<std::string> dirs;
  for (std::size_t i = 0; i < points.size(); ++i) {
    dirs.push_back(fmt::format("{}/points/{:04d}", opt.out_dir, i));
    write_file_atomic(dirs.back() + "/scenario.yaml", point_yaml(root, axes, points[i], scenario_dir));
  }
  std::vector<int> rc(points.size(), -1);
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0, done = 0;
  progress(0, points.size());
  while (done < points.size()) {
    while (next < points.size() && static_cast<int>(running.size()) < jobs) {
      running[start_point(exe, dirs[next] + "/scenario.yaml", dirs[next], jobs > 1)] = next;
      ++next;
    }
    int status      = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    auto it         = running.find(pid);
    if (pid < 0 || it == running.end())
      continue;
    rc[it->second] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    running.erase(it);
    progress(++done, points.size());
  }

  // Merge in point order.
  std::vector<std::string> header{"point"};
  for (const SweepAxis& a : axes)
    header.insert(header.end(), a.keys.begin(), a.keys.end());
  header.push_back("status");
  bool serving = false;
  std::vector<json> summaries(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    if (rc[i] == 0) {
      std::ifstream in(dirs[i] + "/summary.json");
      summaries[i] = json::parse(in);
      serving      = serving || summaries[i].contains("serving");
    }
  if (serving)
    header.insert(header.end(), std::begin(serving_cols), std::end(serving_cols));
  else
    header.insert(header.end(), {"step_time_us", "exposed_comm_us"});

  std::vector<std::vector<std::string>> rows;
  int failed = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> row{fmt::format("{}", i)};
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (const YAML::Node& v : axes[a].values[points[i][a]])
        row.push_back(scalar_text(v));
    row.push_back(rc[i] == 0 ? "ok" : fmt::format("failed({}): see {}/log.txt", rc[i], dirs[i]));
    failed += rc[i] != 0;
    const std::size_t metrics = header.size() - row.size();
    for (std::size_t k = 0; k < metrics; ++k) {
      const std::string& col = header[row.size()];
      const json& s          = summaries[i];
      const json* v          = nullptr;
      if (rc[i] == 0)
        v = serving ? (s.contains("serving") && s["serving"].contains(col) ? &s["serving"][col] : nullptr)
                    : (s.contains(col) ? &s[col] : nullptr);
      row.push_back(!v ? "" : v->is_number_float() ? fmt::format("{:.3f}", v->get<double>()) : v->dump());
    }
    rows.push_back(row);
  }
  std::string csv;
  for (const auto& r : std::vector<std::vector<std::string>>{header}) {
    for (std::size_t k = 0; k < r.size(); ++k)
      csv += (k ? "," : "") + r[k];
    csv += "\n";
  }
  for (const auto& r : rows) {
    for (std::size_t k = 0; k < r.size(); ++k)
      csv += (k ? "," : "") + (r[k].find(',') != std::string::npos ? "\"" + r[k] + "\"" : r[k]);
    csv += "\n";
  }
  write_file_atomic(opt.out_dir + "/sweep.csv", csv);

  // The printed table: axis values and the headline figures.
  std::size_t key_columns = 0;
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
    for (const auto& r : rows)
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
  for (const auto& r : rows)
    print_row(r);
  fmt::print("wrote {}/sweep.csv ({} points, {} failed)\n", opt.out_dir, points.size(), failed);
  return failed ? 1 : 0;
}

} // namespace dbosim::cli

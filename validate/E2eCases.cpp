#include "validate/E2eCases.hpp"

#include "config/EngineTable.hpp"

#include "base/AtomicFile.hpp"
#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/SweepAxes.hpp"
#include "config/YamlMap.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace dbosim::validate {

namespace {

namespace fs = std::filesystem;
using json   = nlohmann::json;

/*** Metrics ***/

enum class Metric { step_ms, speedup, itl_p50_ms, itl_ratio, tok_s_per_node };

struct MetricInfo {
  Metric metric;
  const char* name;
  const char* unit;
  const char* what; ///< the printed metric when the case gives no `what`
  bool two_arms;    ///< base and test scenarios
  int serving;      ///< 1: needs a serving scenario, 0: a single step, -1: either
};

const MetricInfo metric_table[] = {
    {Metric::step_ms, "step_ms", "ms", "step time", false, 0},
    {Metric::speedup, "speedup", "x", "t(base)/t(test)", true, 0},
    {Metric::itl_p50_ms, "itl_p50_ms", "ms", "ITL p50", false, 1},
    {Metric::itl_ratio, "itl_ratio", "x", "ITL p50 test/base", true, 1},
    {Metric::tok_s_per_node, "tok_s_per_node", "tok/s/node", "tok/s per node", false, -1},
};

const MetricInfo& metric_info(const std::string& name)
{
  for (const MetricInfo& m : metric_table)
    if (name == m.name)
      return m;
  throw InternalError("e2e: unknown metric " + name); // get_enum checked the name
}

std::vector<std::string> metric_names()
{
  std::vector<std::string> v;
  for (const MetricInfo& m : metric_table)
    v.emplace_back(m.name);
  return v;
}

/*** Case files ***/

struct Arm {
  std::string label; ///< "run", "base" or "test"
  std::string dir;   ///< scenario.yaml, summary.json, log.txt
  std::string yaml;  ///< the scenario as written
  Scenario scenario;
};

struct E2eCase {
  CaseResult result;
  const MetricInfo* metric = nullptr;
  std::string schedule;
  double cache_hit_fraction = 0;
  std::vector<Arm> arms;
};

std::vector<std::string> case_files(const std::string& dir)
{
  if (!fs::is_directory(dir))
    throw InputError(dir, 0, 0, "--cases", "not a directory");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml" && is_e2e_case_file(e.path().filename().string()))
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/** `overrides` (a mapping of dotted scenario keys) applied to `node`. */
void apply_keys(YamlMap& m, const std::string& key, YAML::Node& node)
{
  if (!m.has(key))
    return;
  const YAML::Node o = m.raw(key);
  if (!o.IsMap() || o.size() == 0)
    m.fail(key, "must be a non-empty mapping of dotted scenario keys to values", "{overlap.enable_dbo: true, ...}");
  for (const auto& kv : o) {
    if (!kv.first.IsScalar() || kv.first.as<std::string>().empty())
      m.fail_at(kv.first, key, "a key must be a dotted scenario key", "workload.tokens_per_rank, ...");
    set_sweep_key(node, kv.first.as<std::string>(), kv.second,
                  KeyOrigin{m.file(), kv.first.Mark().line + 1, kv.first.Mark().column + 1, m.path(key)});
  }
}

bool valid_name(const std::string& s)
{
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  }) && s[0] != '.';
}

E2eCase parse_case(YamlMap& m, const std::string& work_dir)
{
  E2eCase c;
  CaseResult& r = c.result;
  r.name        = m.get_string("name");
  if (!valid_name(r.name))
    m.fail("name", "must be a plain name (it names the case's output folder)", "letters, digits, _ - .");
  r.group         = m.get_string("group", "e2e");
  c.metric        = &metric_info(m.get_enum("metric", metric_names()));
  r.metric        = m.get_string("what", c.metric->what);
  r.unit          = c.metric->unit;
  r.measured      = m.get_double("measured", 1e-9, 1e12);
  r.tolerance_pct = m.get_double("tolerance_pct", 0.1, 1000);
  m.get_string("tolerance_basis"); // required: why this tolerance
  r.source   = m.get_string("source");
  c.schedule = m.get_string("schedule", "");
  if (!c.schedule.empty()) {
    const auto& reg = sim::schedule_registry();
    if (std::none_of(reg.begin(), reg.end(), [&](const sim::ScheduleEntry& e) { return c.schedule == e.name; }))
      m.fail("schedule", "unknown schedule", sim::schedule_names());
  }
  if (m.has("cache_hit_fraction") && c.metric->metric != Metric::tok_s_per_node)
    m.fail("cache_hit_fraction", "only the tok_s_per_node metric counts cached tokens", "metric: tok_s_per_node");
  c.cache_hit_fraction = m.get_double("cache_hit_fraction", 0, 0.99, 0);
  m.get_string("mtp", ""); // the source's MTP setting, recorded; the prediction runs without MTP

  const YAML::Node scenario = m.raw("scenario");
  if (!scenario.IsMap())
    m.fail("scenario", "must be a scenario mapping (model, hardware, parallel, workload, overlap, ...)");
  if (scenario["sweep"])
    m.fail("scenario", "a case's scenario has no sweep: section (one case per point)");
  YAML::Node common = YAML::Clone(scenario);
  apply_keys(m, "set", common);

  std::vector<std::string> labels = {"run"};
  if (c.metric->two_arms) {
    labels = {"base", "test"};
    for (const char* k : {"base", "test"})
      if (!m.has(k))
        m.fail(k, std::string("metric ") + c.metric->name + " compares two scenarios: give `base` and `test`",
               "{dotted.key: value, ...}");
  } else
    for (const char* k : {"base", "test"})
      if (m.has(k))
        m.fail(k, std::string("metric ") + c.metric->name + " runs one scenario (use `set`)", "set");

  for (const std::string& label : labels) {
    YAML::Node node = YAML::Clone(common);
    if (label != "run")
      apply_keys(m, label, node);
    Arm a;
    a.label = label;
    a.dir   = (fs::path(work_dir) / r.name / label).string();
    YAML::Emitter out;
    out << node;
    const std::string yaml = (fs::path(a.dir) / "scenario.yaml").string();
    a.yaml                 = std::string(out.c_str()) + "\n";
    write_file_atomic(yaml, a.yaml);
    try {
      a.scenario = load_scenario(yaml);
    } catch (const InputError& e) {
      m.fail(label == "run" ? "scenario" : label, "the " + label + " scenario does not load: " + e.what());
    }
    const bool serving = a.scenario.requests.num_prompts > 0 || !a.scenario.requests.trace.empty();
    if (c.metric->serving == 1 && !serving)
      m.fail("scenario", std::string("metric ") + c.metric->name + " needs a serving scenario",
             "workload.num_prompts > 0");
    if (c.metric->serving == 0 && serving)
      m.fail("scenario", std::string("metric ") + c.metric->name + " needs a single-step scenario",
             "no workload.num_prompts");
    c.arms.push_back(std::move(a));
  }
  const Scenario& first = c.arms.front().scenario;
  r.slice               = fmt::format("{} {}", engine_row(first.engine).name,
                        first.step.phase == models::Phase::prefill ? "prefill" : "decode");
  r.generation          = first.hw.generation;
  m.allow({"note"});
  m.finish();
  return c;
}

/** Every case of every e2e file, parsed and checked; each arm's scenario written under work_dir. */
std::vector<E2eCase> load_cases(const std::string& dir, const std::string& work_dir)
{
  std::vector<E2eCase> cases;
  for (const std::string& f : case_files(dir)) {
    const YAML::Node root = load_yaml_file(f);
    YamlMap top(root, f, "");
    const YAML::Node list = top.raw("cases");
    if (!list.IsSequence() || list.size() == 0)
      top.fail("cases", "must be a non-empty list of cases");
    top.allow({"defaults"});
    const YAML::Node defaults = root["defaults"];
    if (defaults && !defaults.IsNull())
      YamlMap(defaults, f, "defaults"); // a mapping with plain, unique keys, else an InputError
    for (std::size_t i = 0; i < list.size(); ++i) {
      YAML::Node c = list[i]; // not a clone: the case's own keys keep their line numbers for errors
      if (!c.IsMap())
        top.fail("cases", "case " + std::to_string(i) + " is not a mapping");
      if (defaults && defaults.IsMap())
        for (const auto& kv : defaults)
          if (!c[kv.first.as<std::string>()])
            c[kv.first.as<std::string>()] = kv.second;
      YamlMap m(c, f, "cases[" + std::to_string(i) + "]");
      E2eCase e = parse_case(m, work_dir);
      for (const E2eCase& prev : cases)
        if (prev.result.name == e.result.name)
          m.fail("name", "two e2e cases have the name '" + e.result.name + "'", "a unique name");
      cases.push_back(std::move(e));
    }
    top.finish();
  }
  return cases;
}

/*** Running ***/

/** `dbosim run` on the arm's scenario in a child process; its summary.json. */
json run_arm(const std::string& exe, const E2eCase& c, const Arm& a)
{
  std::vector<std::string> args = {exe, "run", (fs::path(a.dir) / "scenario.yaml").string(), "--out", a.dir};
  if (!c.schedule.empty())
    args.insert(args.end(), {"--schedule", c.schedule});
  std::vector<char*> argv;
  for (std::string& s : args)
    argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string log = (fs::path(a.dir) / "log.txt").string();
  const int rc          = sim::run_in_child([&]() -> std::string {
                   const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
                   if (fd >= 0) {
                     dup2(fd, STDOUT_FILENO);
                     dup2(fd, STDERR_FILENO);
                   }
                   execv(exe.c_str(), argv.data());
                   _exit(127);
                 }).exit_code; // 128 + signal for a run killed by one
  if (rc != 0)
    throw InternalError(
        fmt::format("validate e2e: case {} ({}): `{} run` exited {}; see {}", c.result.name, a.label, exe, rc, log));
  std::ifstream in(fs::path(a.dir) / "summary.json");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception&) {
    throw InternalError(
        fmt::format("validate e2e: case {} ({}): no readable summary.json in {}", c.result.name, a.label, a.dir));
  }
}

double figure(const E2eCase& c, const Arm& a, const json& s, const char* key)
{
  const json* v = &s;
  if (std::string(key) != "step_time_us") {
    if (!s.contains("serving"))
      throw InternalError("validate e2e: case " + c.result.name + ": the serving run wrote no serving block");
    v = &s["serving"];
  }
  if (!v->contains(key) || !(*v)[key].is_number() || !(std::isfinite((*v)[key].get<double>())) ||
      (*v)[key].get<double>() <= 0)
    throw InternalError(
        fmt::format("validate e2e: case {} ({}): summary.json has no positive {}", c.result.name, a.label, key));
  return (*v)[key].get<double>();
}

/** Summaries of the scenarios already run (scenario text and schedule): cases that share an arm run it once. */
using RunMemo = std::map<std::string, json>;

double predict(const std::string& exe, const E2eCase& c, RunMemo& memo)
{
  std::vector<json> s;
  for (const Arm& a : c.arms) {
    const std::string key = c.schedule + "\n" + a.yaml;
    auto it               = memo.find(key);
    if (it == memo.end())
      it = memo.emplace(key, run_arm(exe, c, a)).first;
    s.push_back(it->second);
  }
  const Arm& a0 = c.arms[0];
  switch (c.metric->metric) {
  case Metric::step_ms:
    return figure(c, a0, s[0], "step_time_us") / 1000.0;
  case Metric::speedup:
    return figure(c, c.arms[0], s[0], "step_time_us") / figure(c, c.arms[1], s[1], "step_time_us");
  case Metric::itl_p50_ms:
    return figure(c, a0, s[0], "median_itl_ms");
  case Metric::itl_ratio:
    return figure(c, c.arms[1], s[1], "median_itl_ms") / figure(c, c.arms[0], s[0], "median_itl_ms");
  case Metric::tok_s_per_node: {
    const Scenario& sc  = a0.scenario;
    const double node   = sc.cluster.gpus_per_node;
    const double tokens = s[0].contains("serving") ? figure(c, a0, s[0], "output_throughput_per_gpu") * node
                                                   : sc.step.tokens * node * 1e6 / figure(c, a0, s[0], "step_time_us");
    return tokens / (1.0 - c.cache_hit_fraction);
  }
  }
  throw InternalError("validate e2e: unhandled metric");
}

} // namespace

bool is_e2e_case_file(const std::string& filename) { return filename.rfind("e2e", 0) == 0; }

std::vector<std::string> check_e2e_cases(const std::string& cases_dir)
{
  const fs::path scratch = fs::temp_directory_path() / fmt::format("dbosim-e2e-check-{}", getpid());
  std::vector<std::string> names;
  try {
    for (const E2eCase& c : load_cases(cases_dir, scratch.string()))
      names.push_back(c.result.name);
  } catch (...) {
    fs::remove_all(scratch);
    throw;
  }
  fs::remove_all(scratch);
  return names;
}

std::vector<CaseResult> run_e2e_cases(const E2eOptions& opt)
{
  fs::remove_all(opt.work_dir);
  const std::vector<E2eCase> cases = load_cases(opt.cases_dir, opt.work_dir);
  std::vector<CaseResult> rows;
  RunMemo memo;
  for (const E2eCase& c : cases) {
    CaseResult r = c.result;
    r.predicted  = predict(opt.dbosim, c, memo);
    rows.push_back(r);
    if (opt.on_progress)
      opt.on_progress(rows.size(), cases.size());
  }
  return rows;
}

} // namespace dbosim::validate

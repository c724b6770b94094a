#include "validate/BenchScenario.hpp"

#include "base/AtomicFile.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/SweepAxes.hpp"
#include "config/YamlMap.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

namespace dbosim::validate {

namespace {

namespace fs = std::filesystem;

/** One setting as both sides hold it: the scenario's value (as loaded: its default when the file states none) and
 *  the bench file's, with where the bench file states it. */
struct Pair {
  const char* key;
  bool scenario_states;
  double scenario; ///< the loaded scenario's value
  std::optional<double> bench;
  std::string bench_key;
  FieldAt at;
  bool integer;
  bool from_trace; ///< a trace sets it: the bench file's is not taken
};

bool same(double a, double b) { return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

template <class T> std::optional<double> as_double(const BenchSetting<T>& s)
{
  return s.value ? std::optional<double>(static_cast<double>(*s.value)) : std::nullopt;
}

std::vector<Pair> pairs(const Scenario& s, const YAML::Node& root, const BenchResult& b)
{
  const YAML::Node w       = root["workload"];
  auto states              = [&](const char* k) { return w.IsMap() && w[k].IsDefined() && !w[k].IsNull(); };
  const bool trace         = !s.requests.trace.empty();
  const RequestWorkload& r = s.requests;
  return {
      {"num_prompts", states("num_prompts"), double(r.num_prompts), as_double(b.num_prompts), b.num_prompts.key,
       b.num_prompts.at, true, trace},
      {"max_concurrency", states("max_concurrency"), double(r.max_concurrency), as_double(b.max_concurrency),
       b.max_concurrency.key, b.max_concurrency.at, true, false},
      {"request_rate", states("request_rate"), r.request_rate, as_double(b.request_rate), b.request_rate.key,
       b.request_rate.at, false, trace},
      {"burstiness", states("burstiness"), r.burstiness, as_double(b.burstiness), b.burstiness.key, b.burstiness.at,
       false, trace},
  };
}

/** Decides one setting; sets it in `root` when the bench file's value is simulated. */
SettingSource decide(const Pair& p, const BenchResult& b, YAML::Node& root, std::vector<std::string>& warnings)
{
  SettingSource out;
  out.key       = p.key;
  out.bench_key = p.bench_key;
  out.integer   = p.integer;
  if (p.scenario_states)
    out.scenario = p.scenario;
  out.bench = p.bench;
  out.used  = p.scenario;
  if (p.from_trace) {
    out.from = SettingFrom::trace;
    if (p.bench)
      warnings.push_back(fmt::format("{}: the scenario replays a trace (workload.trace); the bench file's {} ({}) is "
                                     "not simulated",
                                     p.key, out.shown(*p.bench), p.bench_key));
    return out;
  }
  if (!p.bench) {
    out.from = p.scenario_states ? SettingFrom::scenario : SettingFrom::scenario_default;
    return out;
  }
  if (p.scenario_states && same(p.scenario, *p.bench)) {
    out.from = SettingFrom::both;
    return out;
  }
  if (p.scenario_states)
    warnings.push_back(fmt::format("{}: the scenario says {}, the bench file says {} ({}, line {}); simulating the "
                                   "bench file's {}, the measured run's",
                                   p.key, out.shown(p.scenario), out.shown(*p.bench), p.bench_key, p.at.line,
                                   out.shown(*p.bench)));
  YAML::Node v = p.integer ? YAML::Node(static_cast<long>(*p.bench)) : YAML::Node(*p.bench);
  set_sweep_key(root, std::string("workload.") + p.key, v, KeyOrigin{b.file, p.at.line, p.at.col, ""});
  out.used = *p.bench;
  out.from = p.scenario_states ? SettingFrom::bench_over_scenario : SettingFrom::bench;
  return out;
}

} // namespace

std::string SettingSource::shown(double v) const
{
  if (key == "request_rate" && v == 0)
    return "inf";
  if (key == "max_concurrency" && v == 0)
    return "none";
  return integer ? fmt::format("{}", static_cast<long>(v)) : fmt::format("{:g}", v);
}

const char* setting_from_name(SettingFrom f)
{
  switch (f) {
  case SettingFrom::both:
    return "both";
  case SettingFrom::bench:
    return "bench";
  case SettingFrom::bench_over_scenario:
    return "bench_over_scenario";
  case SettingFrom::scenario:
    return "scenario";
  case SettingFrom::trace:
    return "trace";
  case SettingFrom::scenario_default:
    return "scenario_default";
  }
  throw InternalError("setting_from_name: no such source");
}

BenchScenario bench_scenario(const std::string& scenario_path, const BenchResult& bench, const std::string& out_yaml)
{
  const Scenario original = load_scenario(scenario_path); // the user's own file first: its errors name it
  YAML::Node root         = YAML::Clone(load_yaml_file(scenario_path));
  BenchScenario out;
  for (const Pair& p : pairs(original, root, bench))
    out.settings.push_back(decide(p, bench, root, out.warnings));
  if (bench.failed && *bench.failed > 0)
    out.warnings.push_back(fmt::format("{} of the measured run's requests failed: its throughputs count the {} that "
                                       "completed, the simulation completes every request",
                                       *bench.failed, bench.completed));
  for (const std::string& n : bench.notes)
    out.warnings.push_back(n);

  absolutize_paths(root, fs::absolute(scenario_path).parent_path().string()); // the merged file lives elsewhere
  if (!root["name"])
    root["name"] = original.name;
  YAML::Emitter e;
  e << root;
  write_file_atomic(out_yaml, std::string(e.c_str()) + "\n");
  out.written = out_yaml;
  try {
    out.scenario = load_scenario(out_yaml);
  } catch (const InputError& err) {
    throw InputError(bench.file, 0, 0, "",
                     fmt::format("{} with this file's run settings does not load: {}", scenario_path, err.what()));
  }
  return out;
}

std::string settings_text(const BenchScenario& s)
{
  std::string out = "run settings (workload.*):\n";
  for (const SettingSource& p : s.settings) {
    std::string from;
    switch (p.from) {
    case SettingFrom::both:
      from = fmt::format("the scenario and the bench file ({}) agree", p.bench_key);
      break;
    case SettingFrom::bench:
      from = fmt::format("from the bench file ({}); the scenario states none", p.bench_key);
      break;
    case SettingFrom::bench_over_scenario:
      from = fmt::format("from the bench file ({}); the scenario's {} differs (warning below)", p.bench_key,
                         p.shown(p.scenario.value_or(0)));
      break;
    case SettingFrom::scenario:
      from = "from the scenario; the bench file states none";
      break;
    case SettingFrom::trace:
      from = "from the scenario's trace";
      break;
    case SettingFrom::scenario_default:
      from = "the scenario's default; neither states it";
      break;
    }
    out += fmt::format("  {:<16} {:>8}  {}\n", p.key, p.shown(p.used), from);
  }
  for (const std::string& w : s.warnings)
    out += "warning: " + w + "\n";
  return out;
}

} // namespace dbosim::validate

#include "plan/PlanSpec.hpp"

#include "base/AtomicFile.hpp"
#include "base/InputError.hpp"
#include "config/InputFile.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/YamlMap.hpp"
#include "plan/PlanPoints.hpp"
#include "plan/UnsaidSettings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace dbosim::plan {

const std::vector<std::string>& slo_metrics()
{
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const char* stat : {"mean", "median", "p90", "p99"})
      for (const char* m : {"ttft", "tpot", "itl", "e2el"})
        k.push_back(fmt::format("{}_{}_ms", stat, m));
    return k;
  }();
  return keys;
}

std::string blank_section(const std::string& text, const std::string& section)
{
  std::istringstream in(text);
  std::string out, line;
  bool inside = false;
  while (std::getline(in, line)) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#';
    if (top_level)
      inside = line.rfind(section + ":", 0) == 0;
    out += (inside ? "#" : line) + "\n";
  }
  return out;
}

namespace {

void read_plan_section(YamlMap plan, PlanSpec& spec)
{
  YamlMap demand    = plan.get_map("demand");
  const bool tokens = demand.has("output_tokens_per_s"), requests = demand.has("requests_per_s");
  if (tokens == requests)
    demand.fail(tokens ? "requests_per_s" : "output_tokens_per_s", "give exactly one demand",
                "output_tokens_per_s or requests_per_s");
  spec.demand_metric = tokens ? "output_throughput" : "request_throughput";
  spec.demand_unit   = tokens ? "output tok/s" : "req/s";
  spec.demand        = demand.get_double(tokens ? "output_tokens_per_s" : "requests_per_s", 1e-6, 1e12);
  demand.finish();

  YamlMap slo       = plan.get_map("slo");
  const auto& valid = slo_metrics();
  for (const std::string& key : slo.keys()) {
    if (std::find(valid.begin(), valid.end(), key) == valid.end())
      slo.fail(key, "not an SLO metric", fmt::format("{}", fmt::join(valid, ", ")));
    spec.slos.push_back({key, slo.get_double(key, 1e-3, 1e9)});
  }
  if (spec.slos.empty())
    plan.fail("slo", "a plan needs at least one SLO", "{p99_itl_ms: 50, p99_ttft_ms: 2000}");
  spec.uncertainty = plan.get_string("uncertainty", "");
  if (!spec.uncertainty.empty()) { // relative to the plan file, as its other paths; it must exist (no silent band)
    spec.uncertainty =
        (std::filesystem::absolute(spec.file).parent_path() / spec.uncertainty).lexically_normal().string();
    if (!std::filesystem::is_regular_file(spec.uncertainty))
      plan.fail("uncertainty", "no such file: " + spec.uncertainty,
                "a validate baseline file (validate/baseline.yaml), relative to the plan file");
  }
  plan.finish();
}

/** Whether a sweep axis names `key` (or a map holding it). */
bool swept(const PlanSpec& spec, const std::string& key)
{
  for (const PlanAxis& a : spec.axes)
    for (const std::string& k : a.keys)
      if (sweeps_key(k, key))
        return true;
  return false;
}

} // namespace

PlanSpec load_plan(const std::string& path, const std::string& scratch_dir)
{
  PlanSpec spec;
  spec.file             = path;
  const YAML::Node root = load_yaml_file(path);
  YamlMap top(root, path, "");
  if (!top.has("plan"))
    top.fail("plan", "a plan file needs a plan: section (demand, slo)", "plan: {demand: {...}, slo: {...}}");
  if (!top.has("sweep"))
    top.fail("sweep", "a plan file needs a sweep: section (the space to search)", "{parallel.ep: [8, 16], ...}");
  read_plan_section(top.get_map("plan"), spec);

  // The rest is a scenario: read it through the scenario loader as the plan file itself with its plan: lines made
  // comments (the same lines: errors name the plan's; relative paths resolve against the plan's folder).
  YAML::Node scenario_part;
  try {
    scenario_part = YAML::Load(blank_section(read_input_file(path), "plan"));
  } catch (const YAML::Exception& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, "", e.msg);
  }
  load_scenario_node(scenario_part, path);
  spec.axes = parse_sweep_axes(top, "sweep");
  spec.base = YAML::Clone(root);
  spec.base.remove("plan");
  spec.base.remove("sweep");
  absolutize_paths(spec.base, std::filesystem::path(path).parent_path().string());

  // Every point must be a valid scenario: check them all before running any, from one snapshot of the profiles, models
  // and network facts they name (read once, not at every point).
  const FixedInputs fixed;
  const std::string point_file = (std::filesystem::path(scratch_dir) / "plan_point.yaml").string();
  for (const PlanPoint& p : enumerate_points(spec)) {
    write_file_atomic(point_file, point_yaml(spec, p));
    bool serving = false;
    try {
      const Scenario s = load_scenario(point_file);
      serving          = s.requests.num_prompts > 0 || !s.requests.trace.empty();
      for (const UnsaidSetting& u : unsaid_settings(s))
        if (swept(spec, u.key) && (spec.dropped.empty() || spec.dropped.back().index != p.index))
          spec.dropped.push_back({p.index, p.label(), u.key, u.note.substr(2)});
    } catch (const InputError& e) {
      const PlanAxis& axis = spec.axes[axis_of_key(spec.axes, e.key())];
      throw InputError(path, axis.origin.line, axis.origin.col, "sweep",
                       fmt::format("point {} ({}) is not a valid scenario: {}", p.index, p.label(),
                                   message_without_location(e.what(), point_file)));
    }
    if (!serving) // a plan's SLOs and demand are serving metrics: a single step has none
      (top.has("workload") ? top.get_map("workload") : top)
          .fail(top.has("workload") ? "num_prompts" : "workload",
                fmt::format("point {} ({}) has no serving workload, and a plan's SLOs and demand are serving "
                            "metrics",
                            p.index, p.label()),
                "workload.num_prompts >= 1, or workload.trace");
  }
  std::filesystem::remove(point_file);
  spec.product_size = sweep_point_indices(spec.axes).size();
  if (spec.dropped.size() == spec.product_size)
    throw InputError(path, spec.axes.front().origin.line, spec.axes.front().origin.col, "sweep",
                     fmt::format("every point is one its engine cannot be launched to run ({})", dropped_line(spec)),
                     "a sweep with at least one point whose swept settings the engine has a flag for");
  return spec;
}

std::string dropped_line(const PlanSpec& spec)
{
  if (spec.dropped.empty())
    return "";
  // Each key with how many points it dropped and the first such point's note.
  std::vector<std::pair<const PlanSpec::Dropped*, std::size_t>> keys;
  for (const PlanSpec::Dropped& d : spec.dropped) {
    auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first->key == d.key; });
    if (it == keys.end())
      keys.emplace_back(&d, 1);
    else
      ++it->second;
  }
  std::string why;
  for (const auto& [d, n] : keys)
    why += fmt::format("{}{} for {} ({})", why.empty() ? "" : "; ", n, d->key, d->note);
  return fmt::format("{} of {} points dropped, their engine cannot be launched to run them: {}", spec.dropped.size(),
                     spec.product_size, why);
}

} // namespace dbosim::plan

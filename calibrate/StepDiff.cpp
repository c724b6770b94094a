#include "calibrate/StepDiff.hpp"

#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "config/DataDir.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"
#include "sim/engine/ClusterRun.hpp"
#include "sim/plan/SpecDecodeStep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace dbosim::calib {
namespace {

/** Every rank simulated when the routing is drawn (ranks differ), as `dbosim run` does (cli/EngineRun). */
bool every_rank(const Scenario& s) { return s.cluster.routing.dist != models::RoutingDist::balanced; }

/** One cluster step of `s` (plus the draft's passes) in a forked child: ClusterRun starts SimGrid, once per process.
 *  The serving oracle's children run the single-rank engine only, so the every-rank path has its own child here. */
double cluster_step_us(const Scenario& s)
{
  const sim::ChildResult r = sim::run_in_child([&] {
    const double us = sim::run_cluster(s).metrics.step_time_us + sim::scenario_draft_cost(s, s.step).us;
    return fmt::format("{}", us); // the shortest text that reads back as the same double
  });
  if (r.outcome == sim::ChildOutcome::input_error)
    throw InputError(s.file, r.message);
  if (r.outcome == sim::ChildOutcome::killed)
    throw InternalError(fmt::format("diff: the child simulating {} died ({})", s.file, r.message));
  if (!r.ok())
    throw InternalError(r.message);
  return std::stod(r.payload);
}

/** The step of `s` with its hardware replaced by `hw`, and its network facts with hw's when the scenario takes them
 *  from its profile's name (no cluster.network), as the scenario loader picks them. */
double step_us(const Scenario& s, const models::HwProfile& hw)
{
  Scenario v = s;
  v.hw       = hw;
  if (v.parallel.ep > 1 && v.cluster.network.empty() && hw.name != s.hw.name) {
    if (!std::filesystem::exists(resolve_data_file("hwprofiles/network", hw.name)))
      throw InputError(s.file, 0, 0, "cluster.network",
                       fmt::format("no network facts for profile '{}' (hwprofiles/network/{}.yaml)", hw.name, hw.name),
                       fmt::format("a cluster.network for ep {}", v.parallel.ep));
    v.network = load_network_facts(hw.name);
  }
  if (every_rank(v))
    return cluster_step_us(v);
  const serving::StepKey key{v.step};
  serving::EngineOracle oracle(v, 1);
  return oracle.simulate({key}).at(0).step_us;
}

} // namespace

std::vector<std::string> shipped_scenarios()
{
  std::vector<std::string> files;
  for (const std::string& name : list_data_files("scenarios"))
    files.push_back(resolve_data_file("scenarios", name));
  return files;
}

std::vector<StepDiff> diff_steps(const models::HwProfile& a, const models::HwProfile& b,
                                 const std::vector<std::string>& scenario_files)
{
  std::vector<StepDiff> out;
  for (const std::string& file : scenario_files) {
    const Scenario s = load_scenario(file);
    StepDiff d;
    d.scenario = s.name;
    d.file     = file;
    d.engine   = every_rank(s) ? "every rank" : "one rank";
    if (s.requests.num_prompts > 0 || !s.requests.trace.empty()) {
      d.skipped = "a serving run (many steps)";
      out.push_back(d);
      continue;
    }
    std::string first_error; // the first profile's reason, kept whole when neither profile runs the scenario
    for (auto [hw, us, label] : {std::tuple{&a, &d.step_a_us, "A"}, std::tuple{&b, &d.step_b_us, "B"}})
      try {
        *us = step_us(s, *hw);
      } catch (const std::exception& e) { // an input one profile rejects (InputError) or a model refusing it
        d.failed += fmt::format("{}under {}: {}", d.failed.empty() ? "" : "; ", label, e.what());
        if (first_error.empty())
          first_error = e.what();
      }
    if (d.failed.empty()) {
      d.ratio = d.step_b_us / d.step_a_us;
    } else if (d.step_a_us == 0 && d.step_b_us == 0) { // e.g. a MoRI scenario under two CUDA profiles: no difference
      d.skipped = "runs under neither profile: " + first_error;
      d.failed.clear();
    }
    out.push_back(d);
  }
  return out;
}

double worst_step_ratio(const std::vector<StepDiff>& steps)
{
  double worst = 1;
  for (const StepDiff& d : steps)
    if (d.ratio > 0)
      worst = std::max({worst, d.ratio, 1 / d.ratio});
  return worst;
}

int failed_steps(const std::vector<StepDiff>& steps)
{
  return static_cast<int>(std::count_if(steps.begin(), steps.end(), [](const StepDiff& d) {
    return !d.failed.empty() && (d.step_a_us > 0 || d.step_b_us > 0);
  }));
}

std::string step_diff_text(const std::vector<StepDiff>& steps)
{
  std::string s =
      fmt::format("{:<34}{:<12}{:>14}{:>14}{:>9}\n", "scenario", "engine", "step A (us)", "step B (us)", "B/A");
  for (const StepDiff& d : steps) {
    if (!d.skipped.empty())
      s += fmt::format("{:<34}skipped: {}\n", d.scenario, d.skipped);
    else if (!d.failed.empty())
      s += fmt::format("{:<34}{:<12}{:>14}{:>14}{:>9}  failed {}\n", d.scenario, d.engine,
                       d.step_a_us > 0 ? fmt::format("{:.1f}", d.step_a_us) : "-",
                       d.step_b_us > 0 ? fmt::format("{:.1f}", d.step_b_us) : "-", "-", d.failed);
    else
      s += fmt::format("{:<34}{:<12}{:>14.1f}{:>14.1f}{:>9.4f}\n", d.scenario, d.engine, d.step_a_us, d.step_b_us,
                       d.ratio);
  }
  return s;
}

nlohmann::ordered_json step_diff_json(const std::vector<StepDiff>& steps)
{
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const StepDiff& d : steps) {
    nlohmann::ordered_json j{{"scenario", d.scenario}, {"file", d.file}};
    if (!d.skipped.empty()) {
      j["skipped"] = d.skipped;
    } else {
      j["engine"] = d.engine;
      if (d.step_a_us > 0)
        j["step_a_us"] = d.step_a_us;
      if (d.step_b_us > 0)
        j["step_b_us"] = d.step_b_us;
      if (d.ratio > 0)
        j["ratio"] = d.ratio;
      if (!d.failed.empty())
        j["failed"] = d.failed;
    }
    out.push_back(j);
  }
  return out;
}

} // namespace dbosim::calib

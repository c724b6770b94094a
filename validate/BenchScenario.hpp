/* dbosim validate — the scenario a measured serving benchmark is predicted with: the user's scenario, with the run
 * settings the bench file states (num_prompts, max_concurrency, request_rate, burstiness) where the scenario states
 * none; where both state one and they differ, the measured run's value is simulated and a warning names both. The
 * merged scenario is written out and loaded through the scenario loader, so its every rule holds. */
#pragma once
#include "config/Scenario.hpp"
#include "validate/BenchResult.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief Where a simulated run setting came from. */
enum class SettingFrom {
  both,                ///< the scenario and the bench file state the same value
  bench,               ///< the bench file; the scenario states none
  bench_over_scenario, ///< both state it, differently: the bench file's (the measured run's), with a warning
  scenario,            ///< the scenario; the bench file states none
  trace,               ///< the scenario's trace (workload.trace) sets it
  scenario_default,    ///< neither states it: the scenario's default
};

/** @brief "both", "bench", "bench_over_scenario", "scenario", "trace", "scenario_default". */
const char* setting_from_name(SettingFrom f);

/** @brief One run setting (workload.<key>) and where the simulated value came from. Values as the scenario holds
 *  them: max_concurrency and request_rate 0 are unbounded. */
struct SettingSource {
  std::string key;                ///< "num_prompts", "max_concurrency", "request_rate", "burstiness"
  std::optional<double> scenario; ///< as the scenario states it; empty: it does not
  std::optional<double> bench;    ///< as the bench file states it; empty: it does not
  std::string bench_key;          ///< the bench file's field ("completed" where SGLang writes no num_prompts)
  double used      = 0;           ///< the value simulated
  SettingFrom from = SettingFrom::scenario_default;
  bool integer     = false;
  /** @brief `v` as printed: "inf" for an unbounded rate, "none" for no concurrency cap. */
  std::string shown(double v) const;
};

struct BenchScenario {
  Scenario scenario;   ///< as loaded from `written`
  std::string written; ///< the merged scenario file
  std::vector<SettingSource> settings;
  std::vector<std::string> warnings; ///< a setting the two sides give differently, a failed request, ...
};

/** @brief Merges the settings of `bench` into the scenario at `scenario_path`, writes it to `out_yaml` and loads it.
 *  @throws InputError when the scenario does not load, or does not with the bench file's settings. */
BenchScenario bench_scenario(const std::string& scenario_path, const BenchResult& bench, const std::string& out_yaml);

/** @brief The printed lines: each setting and its side, then the warnings ("warning: ..."). */
std::string settings_text(const BenchScenario& s);

} // namespace dbosim::validate

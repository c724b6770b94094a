/* dbosim — `dbosim run`'s timeline part: replay the step on the engine, print the summary, write trace.json;
 * `--compare`: the same scenario with overlap off / async combine only / DBO, side by side. */
#pragma once
#include "config/Scenario.hpp"
#include "sim/engine/StepEngine.hpp"
#include "sim/output/TraceSelection.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dbosim::cli {

struct EngineRunOptions {
  std::string schedule; ///< a sim::schedule_registry() name; empty: from the scenario's overlap settings
  bool compare = false;
  std::vector<std::string> simgrid_args; ///< extra SimGrid options (after dbosim's defaults: the user's win)
  /** The engine (--engine); unset: SimGrid for one rank (the reference), automatic for every-rank cluster runs. */
  std::optional<sim::EngineKind> engine;
  sim::TraceSelection trace; ///< the ranks trace.json draws (--trace); none: no trace.json
};

/** @brief Simulates one step of `s`, prints the summary, writes out_dir/trace.json and returns the summary fields
 *  (step_time_us, per_layer_us, exposed_comm_us, overlap_us, stream_busy_pct, critical_path, per_op, plan). With
 *  `compare`, first runs the three overlap modes in child processes (SimGrid: one simulation per process), writes
 *  them under out_dir/compare/ and prints them side by side; the returned fields then carry a "compare" entry. */
nlohmann::ordered_json run_engine(const Scenario& s, const std::string& out_dir, const EngineRunOptions& opt);

/** @brief The summary fields run_engine returns for `s` on `engine` (no schedule override, no --compare), with
 *  nothing printed and no file written: what `dbosim sweep --table-only` reads a point's figures from. */
nlohmann::ordered_json step_figures(const Scenario& s, sim::EngineKind engine);

} // namespace dbosim::cli

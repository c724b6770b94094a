/* dbosim — `dbosim run` on a scenario with a serving workload (workload.num_prompts or workload.trace), and
 * `dbosim sweep`: every point of a scenario's `sweep:` section in its own process, merged into one CSV. */
#pragma once
#include "config/Scenario.hpp"
#include "plan/LaunchCommand.hpp"
#include "serving/KvCapacity.hpp"
#include "serving/ServingSim.hpp"
#include "sim/engine/StepEngine.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dbosim::cli {

/** @brief True when the scenario asks for a serving run rather than one step. */
bool has_serving_workload(const Scenario& s);

/** @brief A serving run, simulated and measured, before anything is printed or written. */
struct ServingRun {
  serving::ServingResult result;
  serving::KvCapacity kv;
  nlohmann::ordered_json block;        ///< summary.json's "serving" block
  nlohmann::ordered_json summary;      ///< summary.json (checked against its schema)
  nlohmann::ordered_json bucket_error; ///< the step cache's bucket error (measure_bucket_error)
  long distinct_shapes = 0;            ///< step shapes simulated
  plan::LaunchCommand launch;          ///< the point's vLLM launch
};

/** @brief Runs the workload of `s` through the scheduler and the step-time cache (the path of `dbosim run`). */
ServingRun simulate_serving(const Scenario& s, const std::vector<std::string>& simgrid_args = {},
                            std::optional<sim::EngineKind> engine = std::nullopt, bool share_shapes = false);

/** @brief out_dir/{summary.json, requests.csv, steps.csv (when serving.step_trace)} of a run. */
void write_serving_outputs(const Scenario& s, const ServingRun& run, const std::string& out_dir);

/** @brief Runs the workload through the scheduler and the step-time cache; prints vllm-bench-serve's table and
 *  writes out_dir/{summary.json (with a "serving" block), requests.csv, steps.csv}. Returns the exit code. */
int serving_command(const Scenario& s, const std::string& out_dir, const std::vector<std::string>& simgrid_args = {},
                    std::optional<sim::EngineKind> engine = std::nullopt, bool share_shapes = false);

struct SweepOptions {
  std::string scenario;
  std::string out_dir = "out";
  int jobs            = 0; ///< points at once; 0: the cores this process may run on (base/Cores)
  std::string dbosim;      ///< the program each point runs; empty: this one (/proc/self/exe)
  bool resume = false;     ///< keep points whose scenario is unchanged and whose summary.json an earlier run wrote
  /** --engine: simgrid runs every point as `dbosim run` in its own process (the reference path); replay and auto
   *  run them in -j worker processes, many points each (sim/engine/StepEngine), with no trace.json per point. */
  std::string engine = "auto";
  /** --table-only: one-step points loaded from memory and priced in the -j workers; sweep.csv and the printed table
   *  only, no points/ folder (cli/SweepCommand.cpp's sweep_table_only). */
  bool table_only = false;
};

/** @brief `dbosim sweep SCENARIO [-j N] [--out DIR] [--resume] [--engine E] [--table-only]`: DIR/points/NNNN/ (not
 *  under --table-only), DIR/sweep.csv, a printed table.
 *  Every point is loaded (checked against the parameter table) before any runs; a point folder past the sweep's
 *  points is removed; SIGINT/SIGTERM are forwarded to the running points, which are waited for. */
int sweep_command(const SweepOptions& opt);

} // namespace dbosim::cli

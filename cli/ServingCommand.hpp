/* dbosim — `dbosim run` on a scenario with a serving workload (workload.num_prompts or workload.trace), and
 * `dbosim sweep`: every point of a scenario's `sweep:` section in its own process, merged into one CSV. */
#pragma once
#include "config/Scenario.hpp"
#include "sim/engine/StepEngine.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dbosim::cli {

/** @brief True when the scenario asks for a serving run rather than one step. */
bool has_serving_workload(const Scenario& s);

/** @brief Runs the workload through the scheduler and the step-time cache; prints vllm-bench-serve's table and
 *  writes out_dir/{summary.json (with a "serving" block), requests.csv, steps.csv}. Returns the exit code. */
int serving_command(const Scenario& s, const std::string& out_dir, const std::vector<std::string>& simgrid_args = {},
                    std::optional<sim::EngineKind> engine = std::nullopt, bool share_shapes = false);

struct SweepOptions {
  std::string scenario;
  std::string out_dir = "out";
  int jobs            = 0; ///< points at once; 0: the machine's cores
  std::string dbosim;      ///< the program each point runs; empty: this one (/proc/self/exe)
  bool resume = false;     ///< keep points whose scenario is unchanged and whose summary.json an earlier run wrote
  /** --engine: simgrid runs every point as `dbosim run` in its own process (the reference path); replay and auto
   *  run them in -j worker processes, many points each (sim/engine/StepEngine), with no trace.json per point. */
  std::string engine = "auto";
};

/** @brief `dbosim sweep SCENARIO [-j N] [--out DIR] [--resume] [--engine E]`: DIR/points/NNNN/, DIR/sweep.csv, a
 *  printed table.
 *  Every point is loaded (checked against the parameter table) before any runs; a point folder past the sweep's
 *  points is removed; SIGINT/SIGTERM are forwarded to the running points, which are waited for. */
int sweep_command(const SweepOptions& opt);

} // namespace dbosim::cli

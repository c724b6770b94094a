/* dbosim — the subcommands of the dbosim program. Each returns the process exit code. */
#pragma once
#include <string>
#include <vector>

namespace dbosim {
struct ServingEngine; // config/EngineTable.hpp
}

namespace dbosim::cli {

struct RunOptions {
  std::string scenario;
  std::string out_dir = "out";
  bool help_params    = false;
  std::string explain;  ///< an op name (A0 A1 D MLP S C) or STEP: print how its cost was obtained
  std::string schedule; ///< engine schedule override (sim::schedule_registry()); empty: from the scenario
  bool compare = false; ///< also run overlap off / async combine / DBO side by side
  std::vector<std::string> simgrid_args; ///< extra SimGrid options (--cfg=..., --log=...) after dbosim's defaults
  std::string engine;      ///< --engine: simgrid, replay or auto (sim/engine/StepEngine); empty: each path's default
  std::string trace;       ///< --trace: auto (empty), all, none or ranks=LIST (sim::parse_trace_selection)
  bool write_trace = true; ///< false: no trace.json whatever the scenario (the sweep's in-process points)
  /** A serving run shares simulated step shapes with this process's earlier runs of the same step fingerprint (the
   *  sweep's worker processes: EngineOracle's share_shapes). */
  bool share_shapes = false;
};

/** @brief `dbosim run SCENARIO [--out DIR]`: simulate one scenario, print its summary, write DIR/summary.json. */
int run_command(const RunOptions& opt);
/** @brief `dbosim models`: the model zoo. */
int models_command();
/** @brief `dbosim hw`: the hardware profiles. */
int hw_command();
/** @brief `dbosim schedules`: the engine schedules (sim::schedule_registry()): name, micro-batches, order. */
int schedules_command();
/** @brief `dbosim backends`: the all-to-all backends (models/All2AllTable.hpp): name, traits, launches, doc. */
int backends_command();

/** @brief `dbosim engines`: the serving-engine rows (config/EngineTable.hpp), then each row's rules with sources. */
int engines_command();

/** @brief One engine row as text: its id, label, default schedules, launch family, then one line per rule with its
 *  source (`dbosim engines` and `run --explain` print it). */
std::string engine_rules_text(const ServingEngine& e);

} // namespace dbosim::cli

/* dbosim — a capacity plan: a scenario (the base point) with a `sweep:` section (the space to search) and a `plan:`
 * section (the demand and the SLOs). Read through config/YamlMap and the scenario loader, so a bad plan gets the same
 * file:line:col errors as a bad scenario. */
#pragma once
#include "config/SweepAxes.hpp"

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace dbosim::plan {

/** @brief One SLO: a vLLM bench serve latency key (p99_itl_ms, ...) that must not exceed `max_ms`. */
struct Slo {
  std::string metric;
  double max_ms = 0;
};

/** @brief One axis of the search space: one key, or comma-joined keys whose values are zipped. */
using PlanAxis = SweepAxis;

struct PlanSpec {
  std::string file;
  std::string demand_metric; ///< the summary key the demand is in: output_throughput or request_throughput
  std::string demand_unit;   ///< "output tok/s" or "req/s"
  double demand = 0;         ///< in that metric's unit
  std::vector<Slo> slos;
  std::vector<PlanAxis> axes; ///< first axis slowest
  YAML::Node base;            ///< the scenario keys without plan: and sweep:, paths made absolute
  std::string uncertainty;    ///< validate baseline file (MAPE per group); empty: data_dir()/validate/baseline.yaml
  /** The points of the sweep's product its engine cannot be launched to run (plan/UnsaidSettings.hpp: a swept key
   *  no flag sets), left out of enumerate_points: each its index in the product, its label and why */
  struct Dropped {
    std::size_t index = 0;
    std::string label;
    std::string key;  ///< the swept key the engine cannot be told
    std::string note; ///< the launch's note for it ("not a vLLM flag: ...")
  };
  std::vector<Dropped> dropped;
  std::size_t product_size = 0; ///< the points of the sweep's product, dropped ones included
};

/** @brief One line: how many points of the product were dropped and why; "" when none was. */
std::string dropped_line(const PlanSpec& spec);

/** @brief The SLO keys a plan may bound: {mean,median,p90,p99}_{ttft,tpot,itl,e2el}_ms. */
const std::vector<std::string>& slo_metrics();

/** @brief Reads and checks `path`: its plan: section, then the rest as a scenario (through load_scenario, with
 *  `scratch_dir` for the copy it reads). @throws InputError located in `path`. */
PlanSpec load_plan(const std::string& path, const std::string& scratch_dir);

/** @brief `text` with the top-level `section:` block turned into comment lines (so line numbers stay). */
std::string blank_section(const std::string& text, const std::string& section);

} // namespace dbosim::plan

/* dbosim — one cluster scenario end to end: network facts, ClusterPlan, one schedule per rank class, ClusterEngine,
 * metrics. One simulation per process (SimGrid). */
#pragma once
#include "config/Scenario.hpp"
#include "sim/ClusterEngine.hpp"
#include "sim/ClusterPlan.hpp"
#include "sim/ClusterPlanBuilder.hpp"
#include "sim/ClusterSummary.hpp"
#include "sim/StepPlanBuilder.hpp"

#include <vector>

namespace dbosim::sim {

struct ClusterRun {
  ClusterPlan plan;
  Schedule sched; ///< the DAG every rank runs
  ClusterTimeline timeline;
  ClusterMetrics metrics;
  double engine_wall_s = 0;    ///< wall time of the replay alone
  bool simgrid         = true; ///< replayed on SimGrid (false: the exact max-plus replay)
};

/** @brief Network facts of the scenario: cluster.network, else the hardware profile's name. */
const models::NetworkFacts& scenario_network_facts(const Scenario& sc);

/** @brief Plans, simulates `steps` steps and measures; `opt` as for build_step_plan. Uses the exact max-plus replay
 *  when ClusterEngine::exact_replay_applies() unless `force_simgrid`; else SimGrid (one simulation per process). */
ClusterRun run_cluster(const Scenario& sc, const PlanOptions& opt = {}, int steps = 1,
                       const std::vector<std::string>& simgrid_args = {}, bool force_simgrid = false);

} // namespace dbosim::sim

/* dbosim — one cluster scenario end to end: network facts, ClusterPlan, one schedule per rank class, ClusterEngine,
 * metrics. One simulation per process (SimGrid). */
#pragma once
#include "config/Scenario.hpp"
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/StepEngine.hpp"
#include "sim/output/ClusterSummary.hpp"
#include "sim/output/ClusterTrace.hpp"
#include "sim/output/Metrics.hpp"
#include "sim/plan/ClusterPlan.hpp"
#include "sim/plan/ClusterPlanBuilder.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

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

/** @brief One rank's step out of a cluster run, as a single-rank run gives it: its class's plan, the schedule built
 *  from that plan (its own op durations), its timeline and its metrics. */
struct RankStep {
  int rank             = 0;
  int rank_class       = 0;
  const StepPlan* plan = nullptr; ///< in the ClusterRun
  Schedule sched;
  Metrics metrics;
};

/** @brief The representative rank's step (ClusterMetrics::representative: its step is the cluster's), its timeline
 *  checked as a single-rank run's is (require_valid_timeline); every rank class's timeline is checked against the
 *  shared DAG (timeline_violations). InternalError on a violation. */
RankStep representative_step(const ClusterRun& run);

/** @brief Network facts of the scenario: cluster.network, else the hardware profile's name. */
const models::NetworkFacts& scenario_network_facts(const Scenario& sc);

/** @brief Plans, simulates `steps` steps and measures; `opt` as for build_step_plan. `engine`: automatic (the
 *  default) uses the exact max-plus replay when ClusterEngine::exact_replay_applies(), else SimGrid in a forked child;
 *  simgrid runs SimGrid in this process (one simulation per process); replay is an InputError (naming
 *  `engine_option`) where the replay is not exact. */
ClusterRun run_cluster(const Scenario& sc, const PlanOptions& opt = {}, int steps = 1,
                       const std::vector<std::string>& simgrid_args = {}, EngineKind engine = EngineKind::automatic,
                       const std::string& engine_option = "--engine");

} // namespace dbosim::sim

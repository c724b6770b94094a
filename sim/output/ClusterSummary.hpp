/* dbosim — what the cluster run says: the step, the per-rank spread (min / median / max of step time, expert rows
 * and own work) and the straggler (the trace: sim/output/ClusterTrace). */
#pragma once
#include "sim/engine/ClusterEngine.hpp"
#include "sim/plan/ClusterPlan.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::sim {

struct Spread {
  double min = 0, median = 0, max = 0;
};

/** @brief min / median (lower middle for an even count) / max of `v` (empty: zeros). */
Spread spread_of(std::vector<double> v);

struct ClusterMetrics {
  double step_time_us = 0; ///< the last rank's end
  Spread rank_step_us;     ///< each rank's own step (its last op's end)
  Spread expert_rows;      ///< token copies each rank's experts compute (one MoE layer, all micro-batches)
  Spread own_work_us;      ///< each rank's MLP + dispatch + combine of one MoE layer, alone
  int straggler = 0;       ///< the rank with the most own work (lowest index on a tie)
  /** The rank whose figures summary.json's step figures are: the straggler when its step is the cluster's (the last
   *  collective usually makes every rank end together), else the slowest rank (lowest index on a tie). */
  int representative = 0;
  int classes        = 1; ///< ranks simulated (distinct rank classes)
};

ClusterMetrics cluster_metrics(const ClusterPlan& plan, const ClusterTimeline& tl);

/** @brief summary.json's "cluster" object: the per-rank spread, the straggler, and which rank the summary's step
 *  figures (exposed_comm_us, critical_path, per_op, ...) are of ("representative"). */
nlohmann::ordered_json cluster_summary_json(const ClusterPlan& plan, const ClusterMetrics& m);

/** @brief Printed form of the cluster figures. */
std::string cluster_summary_text(const ClusterPlan& plan, const ClusterMetrics& m);

} // namespace dbosim::sim

/* dbosim — a cluster run's Chrome trace: one process per drawn rank (TraceWriter's tracks), streamed to the file.
 * Which ranks: every one up to trace_all_ranks_max (or with --trace all), else the slowest, median and fastest ranks
 * plus a track of the collectives' landings, the times every rank waits for (sim/output/TraceSelection). */
#pragma once
#include "sim/engine/ClusterEngine.hpp"
#include "sim/output/ClusterSummary.hpp"
#include "sim/output/TraceSelection.hpp"
#include "sim/plan/ClusterPlan.hpp"
#include "sim/schedules/Schedule.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief The ranks a cluster trace draws, and why. */
struct TracedRanks {
  TraceSelection selection; ///< as asked
  int ep = 0;
  std::vector<int> ranks; ///< ascending; empty with TraceMode::none
  bool landings = false;  ///< a track of the collectives' landings: some ranks are left out
  /** `auto` above trace_all_ranks_max: the ranks ordered by their own work (MLP + D + C of one MoE layer, alone, as
   *  the straggler is chosen; ties by rank): the last (the straggler), the lower middle and the first; and the
   *  representative rank (summary.json's figures) when it is none of them. -1: not picked by role. */
  int slowest = -1, median = -1, fastest = -1, representative = -1;
  int straggler = -1; ///< ClusterMetrics' straggler (its step is the cluster's), whatever the mode; -1 with none
  bool every_rank() const { return static_cast<int>(ranks.size()) == ep; }
  bool written() const { return selection.mode != TraceMode::none; }
};

/** @brief Resolves `sel` on a run's plan and metrics; `all_ranks_max`: auto's threshold. */
TracedRanks pick_trace_ranks(const TraceSelection& sel, const ClusterPlan& plan, const ClusterMetrics& m,
                             int all_ranks_max = trace_all_ranks_max);

/** @brief What the trace holds, e.g. "3 of 1024 ranks (slowest 17, median 400, fastest 3) + collective landings;
 *  --trace all for every rank" (printed after "trace: ", and the trace's otherData.trace). */
std::string traced_ranks_text(const TracedRanks& t);

/** @brief The trace of the ranks in `t`: {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[...]}. Each drawn
 *  rank is a process (pid = its rank) named "rank R (class C)" (", slowest" etc. when picked by role), with flow ids
 *  numbered on from the previous rank's; the landing track is process pid = ep, one instant per D/C collective where
 *  its data has landed on every rank. otherData records the mode, the ranks drawn and the line above. */
void write_cluster_trace(std::ostream& out, const Schedule& sched, const ClusterPlan& plan, const ClusterTimeline& tl,
                         const TracedRanks& t);

/** @brief Every rank's trace as JSON (tests; a large cluster's belongs in a file: write_cluster_trace). */
nlohmann::json cluster_trace(const Schedule& sched, const ClusterPlan& plan, const ClusterTimeline& tl);

} // namespace dbosim::sim

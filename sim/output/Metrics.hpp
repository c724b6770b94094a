/* dbosim — what a timeline says about where the time went. */
#pragma once
#include "sim/engine/Timeline.hpp"
#include "sim/schedules/Schedule.hpp"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Totals of one op kind over the step. */
struct OpTotals {
  int count       = 0;
  double total_us = 0; ///< sum of the ops' run times on their streams
};

struct Metrics {
  double step_time_us = 0;          ///< the layers' timeline plus the step's work outside the layers
  double step_work_us = 0;          ///< the step's work outside the layers (Schedule::step_work_us), serial after them
  std::vector<double> per_layer_us; ///< end of the layer's last op minus end of the previous layer's last op
  double comm_us = 0;         ///< time some D/C runs (union of their intervals; with recv hooks: send to landing, and
                              ///< the recv hooks)
  double compute_us      = 0; ///< time some compute op runs
  double exposed_comm_us = 0; ///< comm time not covered by compute
  double overlap_us      = 0; ///< comm time covered by compute
  std::array<double, num_streams> stream_busy_pct{}; ///< busy time / step time, per stream
  double host_busy_pct = 0;                          ///< host issue time (launch, events, hand-offs, syncs) / step time
  /** @brief The critical path, walked back from the last op through whatever made each start late: a producer, the
   *  op before it on its stream, or its host issue (then the host's own chain). Keys: op kinds, "host_launch",
   *  "host_sync", "idle", and "D_flight"/"C_flight" (a collective's flight before its recv hook). Sums to the step
   *  time. */
  std::map<std::string, double> critical_path_us;
  std::array<OpTotals, num_op_kinds> per_op{};
};

Metrics compute_metrics(const Schedule& sched, const Timeline& tl);

/** @brief Length (µs) of the union of [start, end) intervals. */
double union_length(std::vector<std::pair<double, double>> intervals);

} // namespace dbosim::sim

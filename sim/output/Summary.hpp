/* dbosim — the step's figures as summary.json and as a printed table. */
#pragma once
#include "sim/output/Metrics.hpp"
#include "sim/plan/StepPlan.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief summary.json: step_time_us, per_layer_us, exposed_comm_us, overlap_us, stream_busy_pct, critical_path,
 *  per_op totals, and the plan's decisions (schedule, micro-batches, graph mode, SM partition, notes). */
nlohmann::ordered_json summary_json(const StepPlan& plan, const Metrics& m);

/** @brief The human-readable summary of one run. */
std::string summary_text(const StepPlan& plan, const Metrics& m);

/** @brief Several runs of one scenario side by side (dbosim run --compare). */
std::string compare_text(const std::vector<std::string>& labels, const std::vector<nlohmann::ordered_json>& summaries);

} // namespace dbosim::sim

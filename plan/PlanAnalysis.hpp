/* dbosim — what a capacity planner wants from the points: which meet the SLOs, how many GPUs (replicas of a point's
 * deployment) meet the demand, the fewest per hardware, the Pareto frontier of tok/s/GPU vs tok/s/user, and the DBO
 * and async-combine gain of each point over its twin with the option off. Pure: no I/O. */
#pragma once
#include "plan/PlanPoints.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dbosim::plan {

/** @brief One evaluated point: its status and the summary.json "serving" block (empty when it failed). */
struct PointResult {
  PlanPoint point;
  std::string hardware; ///< the profile name (the point's hardware: value, else the base's)
  std::string status;   ///< "ok" or "failed(rc)"
  nlohmann::json serving;
};

struct PointAnalysis {
  bool ok     = false;            ///< simulated
  bool slo_ok = false;            ///< every SLO met
  std::vector<double> slo_margin; ///< per SLO: 1 − value / limit (negative: missed)
  double throughput         = 0;  ///< in the demand's metric
  int gpus                  = 0;  ///< GPUs of one deployment (replica)
  int replicas              = 0;  ///< replicas to meet the demand
  int gpus_for_demand       = 0;
  double gpu_hours_per_mtok = 0;     ///< GPU-hours per million output tokens
  double capacity_margin    = 0;     ///< replicas × throughput / demand − 1
  bool pareto               = false; ///< on its hardware's frontier of tok/s/GPU vs tok/s/user
  std::optional<double> dbo_gain;    ///< output tok/s/GPU over the twin point with enable_dbo false, − 1
  std::optional<double> async_gain;  ///< same for async_combine
};

struct PlanAnalysis {
  std::vector<PointAnalysis> points;              ///< per point, in point order
  std::map<std::string, std::size_t> best_per_hw; ///< fewest GPUs for the demand, then fewest GPU-hours
  std::optional<std::size_t> recommended;         ///< the best over all hardware
};

/** @brief A summary metric of a point (NaN when absent). */
double metric(const PointResult& r, const std::string& key);

PlanAnalysis analyse(const PlanSpec& spec, const std::vector<PointResult>& results);

} // namespace dbosim::plan

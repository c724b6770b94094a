/* dbosim validate — an external testbed (validate/TestbedOps.hpp) predicted by the engine and compared with its
 * recording: each op's duration from the profile's cost model for its kernel kind (the GEMM tables and SM curves,
 * the copy kernel's bandwidth curve, as for the shipped testbed), the schedule's graph built from the op list itself
 * (streams, dependencies, host issue order), replayed by sim::run_step in a child process. */
#pragma once
#include "hw/HwProfile.hpp"
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/Schedule.hpp"
#include "validate/CaseResult.hpp"
#include "validate/OpRecording.hpp"
#include "validate/TestbedOps.hpp"

#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief The engine's host and GPU side for the testbed (a free host: the testbed issues behind a gate; the
 *  profile's per-kernel gap, its interference factors and the partition), and each op's cost as an OpSpec
 *  (`specs[i]` for `t.ops[i]`). @throws InputError when the profile cannot price an op or the partition does not fit.
 */
sim::StepPlan external_step_plan(const TestbedOps& t, const models::HwProfile& hw, std::vector<sim::OpSpec>& specs);

/** @brief The schedule's DAG from the op list: one vertex per op in issue order, a data edge per dependency, a stream
 *  edge between consecutive ops of a stream. Copy kernels and all-to-alls are comm ops (kind D), GEMMs compute ops
 *  (kind A0). */
sim::Schedule external_schedule(const TestbedOps& t, const std::vector<sim::OpSpec>& specs);

struct ExternalPrediction {
  std::vector<std::pair<double, double>> span_us; ///< per op (file order): start, end
  double makespan_us = 0;                         ///< last end minus first start
};

/** @brief Prices and replays the testbed in a child process. */
ExternalPrediction predict_external(const TestbedOps& t, const models::HwProfile& hw);

/** @brief Rows: the makespan (group external_makespan, checked at `makespan_tolerance_pct`) and each op's duration
 *  (group external_op, reported); measured figures are medians over the recorded repeats. */
std::vector<CaseResult> compare_external(const TestbedOps& t, const ExternalPrediction& p, const OpRecording& rec,
                                         double makespan_tolerance_pct, const std::string& source);

} // namespace dbosim::validate

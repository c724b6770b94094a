/* dbosim — the invariants every replay must satisfy, as a checkable list of violations. */
#pragma once
#include "sim/Schedule.hpp"
#include "sim/Timeline.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Violations of: no two ops overlap on one stream; every dependency (data or stream order) respected; no op
 *  starts before its host issue; the host issues in order; the step ends with its last op, or with the host's return
 *  from a synchronize() after it (host_sync_after_comm). Empty when all hold.
 *  `tol_us` absorbs the solver's rounding. */
std::vector<std::string> timeline_violations(const Schedule& sched, const Timeline& tl, double tol_us = 1e-6);

/** @brief Ops that ran faster than their cost: end - start below the cheaper of the op's duration_us and
 *  partitioned_duration_us. The engine may delay or stretch an op, never shorten it; with the cost guards
 *  (models/CostGuards: no op faster than the profile's peak, no D/C above the fastest link) at the plan's edge,
 *  this keeps those bounds true of the replayed timeline. Empty when all hold. */
std::vector<std::string> duration_violations(const Schedule& sched, const Timeline& tl, double tol_us = 1e-6);

} // namespace dbosim::sim

/* dbosim — the invariants every replay must satisfy, as a checkable list of violations. */
#pragma once
#include "sim/engine/Timeline.hpp"
#include "sim/schedules/Schedule.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Violations of: no two ops overlap on one stream; every dependency (data or stream order) respected; no op
 *  starts before its host issue; the host issues in order; the step ends with its last op, or with the host's return
 *  from a synchronize() after it (host_sync_after_comm). Empty when all hold.
 *  `tol_us` absorbs the solver's rounding: SimGrid's clock is exact only to its surf/precision, 1e-9 s by default
 *  (a 828 us flight of a serving step once landed 0.0006 us early). */
inline constexpr double solver_tolerance_us = 1e-3;
std::vector<std::string> timeline_violations(const Schedule& sched, const Timeline& tl,
                                             double tol_us = solver_tolerance_us);

/** @brief Ops that ran faster than their cost: end - start below the cheaper of the op's duration_us and
 *  partitioned_duration_us. The engine may delay or stretch an op, never shorten it; with the cost guards
 *  (models/CostGuards: no op faster than the profile's peak, no D/C above the fastest link) at the plan's edge,
 *  this keeps those bounds true of the replayed timeline. Empty when all hold. */
std::vector<std::string> duration_violations(const Schedule& sched, const Timeline& tl,
                                             double tol_us = solver_tolerance_us);

} // namespace dbosim::sim

/* dbosim — the invariants every replay must satisfy, as a checkable list of violations. */
#pragma once
#include "sim/Schedule.hpp"
#include "sim/Timeline.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Violations of: no two ops overlap on one stream; every dependency (data or stream order) respected; no op
 *  starts before its host issue; the host issues in order; the step ends with its last op. Empty when all hold.
 *  `tol_us` absorbs the solver's rounding. */
std::vector<std::string> timeline_violations(const Schedule& sched, const Timeline& tl, double tol_us = 1e-6);

} // namespace dbosim::sim

/* dbosim — the last check before a figure leaves the program: a summary that breaks a physical bound is a bug,
 * reported as an InternalError (exit 1) naming the figure, never written. */
#pragma once
#include "sim/engine/Timeline.hpp"
#include "sim/schedules/Schedule.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Figures of `summary` that break a bound, each named by its JSON path ("stream_busy_pct.comm"): every
 *  number finite; every number under a key with "busy" in it (a busy share, %) within 0..100; every time (a key
 *  ending in _us, _ms or _s) non-negative. Empty when all hold. */
std::vector<std::string> summary_violations(const nlohmann::ordered_json& summary);

/** @brief Throws InternalError "`what`: v1; v2; ..." (at most 5 listed) unless `violations` is empty. */
void require_no_violations(const std::vector<std::string>& violations, const std::string& what);

/** @brief The replay's guards: timeline_violations and duration_violations (sim/output/TimelineCheck), as one
 *  InternalError. */
void require_valid_timeline(const Schedule& sched, const Timeline& tl);

/** @brief summary_violations as an InternalError. */
void require_valid_summary(const nlohmann::ordered_json& summary);

} // namespace dbosim::sim

/* dbosim — the timeline as a Chrome trace (loads in Perfetto / chrome://tracing). */
#pragma once
#include "sim/Schedule.hpp"
#include "sim/StepPlan.hpp"
#include "sim/Timeline.hpp"

#include <nlohmann/json.hpp>

namespace dbosim::sim {

/** @brief Trace events: one track per stream and per host thread of rank 0; ops named A0, A1, D, MLP, S, C with
 *  layer and micro-batch in args; host launches and syncs on the host threads; a flow arrow per cross-stream wait;
 *  the SM partition as a counter track. Times in µs rounded to ns, so equal inputs give identical files. */
nlohmann::json chrome_trace(const Schedule& sched, const StepPlan& plan, const Timeline& tl);

} // namespace dbosim::sim

/* dbosim — the timeline as a Chrome trace (loads in Perfetto / chrome://tracing), written as text while it is read
 * off the timeline (base/JsonStream: no JSON tree, so a cluster's every rank streams to the file). */
#pragma once
#include "base/JsonStream.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/Schedule.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>

namespace dbosim::sim {

/** @brief One rank's trace events, written into an open traceEvents array: a process `pid` named `process_name`, one
 *  track per stream and per host thread; ops named A0, A1, D, MLP, S, C with layer and micro-batch in args; host
 *  launches and syncs on the host threads; a flow arrow per cross-stream wait (ids flow_id_base + 1, + 2, ...); the
 *  SM partition as a counter track. Times in µs rounded to ns, so equal inputs give identical files.
 *  @return the flow ids used (the next rank's base is flow_id_base plus this). */
std::int64_t write_rank_events(JsonStream& js, const Schedule& sched, const StepPlan& plan, const Timeline& tl, int pid,
                               const std::string& process_name, std::int64_t flow_id_base);

/** @brief The single-rank trace file: {"displayTimeUnit":"ns","traceEvents":[rank 0's events]} and a newline. */
void write_chrome_trace(std::ostream& out, const Schedule& sched, const StepPlan& plan, const Timeline& tl);

/** @brief write_chrome_trace's document as JSON (tests and small traces). */
nlohmann::json chrome_trace(const Schedule& sched, const StepPlan& plan, const Timeline& tl);

} // namespace dbosim::sim

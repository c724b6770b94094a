/* dbosim — which ranks a run's trace.json draws (`dbosim run --trace all|none|ranks=LIST|auto`), parsed and checked
 * at the edge into a plain struct. A cluster run of 1,024 ranks draws ~250 MB with every rank; `auto` keeps every
 * rank up to trace_all_ranks_max and above it the ranks that tell the step's story (sim/output/ClusterTrace). */
#pragma once
#include <string>
#include <vector>

namespace dbosim::sim {

enum class TraceMode {
  automatic, ///< every rank up to trace_all_ranks_max, else the slowest, median and fastest + collective landings
  all,       ///< every rank
  none,      ///< no trace.json
  ranks,     ///< the listed ranks + collective landings
};

/** @brief The most ranks `auto` draws every one of: 64 ranks are ~16 MB of trace (about 240 KB per 61-layer DeepSeek-V3
 *  decode rank), which Perfetto loads in seconds and whose 64 track groups still read as one picture; past that the
 *  file grows by a megabyte per 4 ranks and the ranks look alike (a collective ends for all when the slowest lands). */
constexpr int trace_all_ranks_max = 64;

struct TraceSelection {
  TraceMode mode = TraceMode::automatic;
  std::vector<int> ranks; ///< mode ranks: ascending, distinct, each in [0, ep)
};

/** @brief "auto", "all", "none" or "ranks=R1,R2,..." (ranks of an EP group of `ep`; the empty string is auto).
 *  @throws InputError naming --trace, the value and the valid forms with the rank range 0..ep-1. */
TraceSelection parse_trace_selection(const std::string& text, int ep);

/** @brief The option's value for `sel` ("auto", "all", "none", "ranks=1,5"): what the trace metadata records. */
std::string trace_selection_name(const TraceSelection& sel);

} // namespace dbosim::sim

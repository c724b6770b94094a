/* dbosim — what the engine recorded: when each op was issued by the host, and when it ran on its stream. */
#pragma once
#include <vector>

namespace dbosim::sim {

/** @brief Times of one op in microseconds from the start of its step. */
struct OpRecord {
  double host_begin_us = 0; ///< the host starts issuing it (launch, event and hand-off costs follow)
  double issue_us      = 0; ///< it is on its stream's queue
  double start_us      = 0; ///< its stream starts it
  double end_us        = 0;
  double sync_end_us   = -1; ///< host_sync_after_comm: the host is released (-1: no host sync after this op)
  double arrive_us     = -1; ///< a collective with a recv hook: its data has landed on every rank (-1: no flight)
  /** @brief When its data consumers may start: the landing of a collective in flight, else its end. */
  double done_us() const { return arrive_us >= 0 ? arrive_us : end_us; }
};

struct Timeline {
  std::vector<OpRecord> ops; ///< by schedule vertex, for the last simulated step
  /** @brief Every simulated step, from the host's first issue to the last op's end, or to the host's return from a
   *  synchronize() after that op when later (host_sync_after_comm: the work after the layers is launched then). */
  std::vector<double> step_time_us;
  double step_time() const { return step_time_us.empty() ? 0 : step_time_us.back(); }
};

} // namespace dbosim::sim

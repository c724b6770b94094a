#include "sim/output/TimelineCheck.hpp"

#include "sim/schedules/OpGraph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dbosim::sim {

static std::string op_label(const Schedule& s, OpVertex v)
{
  const Op& op = s.ops[v];
  return fmt::format("{}(layer {}, ubatch {})", op_kind_name(op.kind), op.layer, op.ubatch);
}

std::vector<std::string> timeline_violations(const Schedule& sched, const Timeline& tl, double tol_us)
{
  std::vector<std::string> out;
  const OpDag& g = sched.graph->dag;
  if (tl.ops.size() != sched.num_ops())
    return {fmt::format("timeline has {} ops, schedule {}", tl.ops.size(), sched.num_ops())};
  for (int s = 0; s < num_streams; ++s) {
    // Sort by start, independently of the FIFO order, so that an overlap is caught whatever caused it.
    std::vector<OpVertex> ops = sched.stream_order[s];
    std::sort(ops.begin(), ops.end(), [&](OpVertex a, OpVertex b) { return tl.ops[a].start_us < tl.ops[b].start_us; });
    for (std::size_t i = 1; i < ops.size(); ++i)
      if (tl.ops[ops[i]].start_us < tl.ops[ops[i - 1]].end_us - tol_us)
        out.push_back(fmt::format("{} stream: {} starts at {} before {} ends at {}", stream_name(StreamId(s)),
                                  op_label(sched, ops[i]), tl.ops[ops[i]].start_us, op_label(sched, ops[i - 1]),
                                  tl.ops[ops[i - 1]].end_us));
  }
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const OpVertex u = boost::source(*e, g);
    const OpVertex v = boost::target(*e, g);
    // A data consumer of a collective in flight waits for its landing; the next op on its stream only for its end.
    const double ready = g[*e].kind == EdgeKind::data ? tl.ops[u].done_us() : tl.ops[u].end_us;
    if (tl.ops[v].start_us < ready - tol_us)
      out.push_back(fmt::format("{} starts at {} before its dependency {} {} at {}", op_label(sched, v),
                                tl.ops[v].start_us, op_label(sched, u), ready > tl.ops[u].end_us ? "lands" : "ends",
                                ready));
  }
  double host_t = 0;
  double last   = 0;
  for (OpVertex v : sched.issue_order) {
    const OpRecord& r = tl.ops[v];
    if (r.start_us < r.issue_us - tol_us)
      out.push_back(
          fmt::format("{} starts at {} before its host issue at {}", op_label(sched, v), r.start_us, r.issue_us));
    if (r.host_begin_us < host_t - tol_us || r.issue_us < r.host_begin_us - tol_us)
      out.push_back(fmt::format("host issues {} out of order", op_label(sched, v)));
    host_t = r.sync_end_us >= 0 ? r.sync_end_us : r.issue_us;
    last   = std::max(last, r.done_us());
  }
  // The step ends when both the GPU and the host are done: the last op's end, or the host's return from a
  // synchronize() after the last op (host_sync_after_comm), which the work after the layers waits for.
  const double end = std::max(last, host_t);
  if (std::abs(tl.step_time() - end) > tol_us)
    out.push_back(host_t > last ? fmt::format("step time {} is not the host's release {} from its last sync",
                                              tl.step_time(), host_t)
                                : fmt::format("step time {} is not the last op's end {}", tl.step_time(), last));
  return out;
}

std::vector<std::string> duration_violations(const Schedule& sched, const Timeline& tl, double tol_us)
{
  if (tl.ops.size() != sched.num_ops())
    return {fmt::format("timeline has {} ops, schedule {}", tl.ops.size(), sched.num_ops())};
  std::vector<std::string> out;
  for (OpVertex v = 0; v < sched.num_ops(); ++v) {
    const Op& op       = sched.ops[v];
    const OpRecord& r  = tl.ops[v];
    const double floor = std::min(op.duration_us, op.partitioned_duration_us);
    const double ran   = r.end_us - r.start_us;
    if (!std::isfinite(r.start_us) || !std::isfinite(r.end_us) || ran < floor * (1 - 1e-9) - tol_us)
      out.push_back(fmt::format("{} ran {} us ({} .. {}), faster than its cost {} us", op_label(sched, v), ran,
                                r.start_us, r.end_us, floor));
    const double flew = r.arrive_us - r.end_us;
    if (op.flight_us > 0 && (!std::isfinite(r.arrive_us) || flew < op.flight_us * (1 - 1e-9) - tol_us))
      out.push_back(fmt::format("{} landed {} us after its send ended ({} .. {}), faster than its flight {} us",
                                op_label(sched, v), flew, r.end_us, r.arrive_us, op.flight_us));
  }
  return out;
}

} // namespace dbosim::sim

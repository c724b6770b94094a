#include "sim/output/Metrics.hpp"

#include "sim/schedules/OpGraph.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dbosim::sim {

using Intervals = std::vector<std::pair<double, double>>;

static Intervals merged(Intervals iv)
{
  std::sort(iv.begin(), iv.end());
  Intervals out;
  for (const auto& [a, b] : iv) {
    if (b <= a)
      continue;
    if (!out.empty() && a <= out.back().second)
      out.back().second = std::max(out.back().second, b);
    else
      out.emplace_back(a, b);
  }
  return out;
}

double union_length(Intervals intervals)
{
  double total = 0;
  for (const auto& [a, b] : merged(std::move(intervals)))
    total += b - a;
  return total;
}

/** Length of the intersection of two merged interval lists. */
static double intersection_length(const Intervals& x, const Intervals& y)
{
  double total  = 0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < x.size() && j < y.size()) {
    const double lo = std::max(x[i].first, y[j].first);
    const double hi = std::min(x[i].second, y[j].second);
    if (hi > lo)
      total += hi - lo;
    (x[i].second < y[j].second) ? ++i : ++j;
  }
  return total;
}

namespace {

/* Walks the critical path backwards. A GPU op started at max(issue, stream predecessor end, producers' ends); the
 * largest of these is what it waited for. An op issued late points at the host: its issue cost, then whatever
 * released the host (the previous issue, or the end of the op a host sync waited on). */
class CriticalPath {
public:
  CriticalPath(const Schedule& s, const Timeline& tl) : sched_(s), tl_(tl) {}

  std::map<std::string, double> walk(OpVertex last)
  {
    std::map<std::string, double> path;
    start_walk(path, last);
    for (;;) {
      if (on_gpu_)
        gpu_step(path);
      else if (!host_step(path))
        return path;
    }
  }

private:
  /** The walk starts at the last op's end, or in the host's return from a synchronize() after the last issued op
   *  when that is later than the last op (TimelineCheck): then in the sync, then on what the sync waited for. */
  void start_walk(std::map<std::string, double>& path, OpVertex last)
  {
    on_gpu_                    = true;
    v_                         = last;
    t_                         = tl_.ops[last].done_us(); // everything after the walk's time is accounted for
    const OpVertex final_issue = sched_.issue_order.back();
    const OpRecord& fr         = tl_.ops[final_issue];
    if (fr.sync_end_us > t_ + 1e-9) {
      const double released = std::max(fr.issue_us, fr.end_us);
      add(path, "host_sync", fr.sync_end_us - released);
      v_ = final_issue; // it starts after its issue, so released is its end
      t_ = released;
    }
  }

  /** GPU side of op v_: its run (and the flight of a collective reached through its data), then what made it start:
   *  the latest-ending predecessor, else the host issue. */
  void gpu_step(std::map<std::string, double>& path)
  {
    const OpRecord& r = tl_.ops[v_];
    path[op_kind_name(sched_.ops[v_].kind)] += r.end_us - r.start_us;
    // Reached through the data of a collective in flight: its flight, up to its landing, is on the path.
    const double flew = std::max(0.0, std::min(t_, r.done_us()) - r.end_us);
    if (flew > 1e-9)
      path[fmt::format("{}_flight", op_kind_name(sched_.ops[v_].kind))] += flew;
    add(path, "idle", t_ - r.end_us - flew);
    t_ = r.start_us;
    // Ties go to the GPU predecessor: the host was not what held the op back.
    double best = -1;
    long pred   = -1;
    for (auto [e, end] = boost::in_edges(v_, sched_.graph->dag); e != end; ++e) {
      const OpVertex u   = boost::source(*e, sched_.graph->dag);
      const double ready = sched_.graph->dag[*e].kind == EdgeKind::data ? tl_.ops[u].done_us() : tl_.ops[u].end_us;
      if (ready > best) {
        best = ready;
        pred = static_cast<long>(u);
      }
    }
    if (pred < 0 || best < r.issue_us - 1e-9) {
      best = r.issue_us;
      pred = -1;
    }
    add(path, "idle", t_ - best);
    t_ = best;
    if (pred >= 0)
      v_ = static_cast<OpVertex>(pred);
    else
      on_gpu_ = false;
  }

  /** Host side of op v_: [host_begin, issue] is its launch cost; then whatever released the host (the previous
   *  issue, or the end of the op a host sync waited on). False when the walk has reached the step's first issue. */
  bool host_step(std::map<std::string, double>& path)
  {
    const OpRecord& r = tl_.ops[v_];
    add(path, "idle", t_ - r.issue_us);
    add(path, "host_launch", r.issue_us - r.host_begin_us);
    t_            = r.host_begin_us;
    const int idx = sched_.ops[v_].issue_index;
    if (idx == 0) {
      add(path, "host_launch", t_); // graph launch before the first issue
      return false;
    }
    const OpVertex prev = sched_.issue_order[static_cast<std::size_t>(idx - 1)];
    const OpRecord& pr  = tl_.ops[prev];
    if (pr.sync_end_us >= 0) {
      // The host sat in synchronize(): first the wait for prev's end, then the sync round trip.
      const double released = std::max(pr.issue_us, pr.end_us);
      add(path, "host_sync", pr.sync_end_us - released);
      add(path, "idle", t_ - pr.sync_end_us);
      t_ = released;
      if (pr.end_us > pr.issue_us) {
        v_      = prev;
        on_gpu_ = true;
        add(path, "idle", t_ - pr.end_us);
        t_ = pr.end_us;
        return true;
      }
    }
    v_ = prev;
    return true;
  }

  const Schedule& sched_;
  const Timeline& tl_;
  OpVertex v_  = 0;    ///< the op the walk is at
  double t_    = 0;    ///< the walk's time: everything after it is accounted for
  bool on_gpu_ = true; ///< at the op's GPU side (else its host side)
  static void add(std::map<std::string, double>& m, const char* key, double us)
  {
    if (us > 1e-9)
      m[key] += us;
  }
};

} // namespace

Metrics compute_metrics(const Schedule& sched, const Timeline& tl)
{
  Metrics m;
  m.step_work_us           = sched.step_work_us;
  m.step_time_us           = tl.step_time() + m.step_work_us;
  const std::vector<Op>& g = sched.ops;
  const std::size_t n      = sched.num_ops();

  std::vector<double> layer_end(static_cast<std::size_t>(sched.num_layers), 0.0);
  Intervals comm;
  Intervals compute;
  std::array<double, num_streams> busy{};
  double host_busy = 0;
  OpVertex last    = 0;
  for (OpVertex v = 0; v < n; ++v) {
    const Op& op                                  = g[v];
    const OpRecord& r                             = tl.ops[v];
    layer_end[static_cast<std::size_t>(op.layer)] = std::max(layer_end[static_cast<std::size_t>(op.layer)], r.end_us);
    (is_all_to_all_part(op.kind) ? comm : compute).emplace_back(r.start_us, r.done_us());
    busy[static_cast<int>(op.stream)] += r.end_us - r.start_us;
    host_busy += r.issue_us - r.host_begin_us;
    if (r.sync_end_us >= 0)
      host_busy += r.sync_end_us - std::max(r.issue_us, r.end_us);
    OpTotals& t = m.per_op[static_cast<int>(op.kind)];
    ++t.count;
    t.total_us += r.end_us - r.start_us;
    if (r.done_us() > tl.ops[last].done_us())
      last = v;
  }
  double prev = 0;
  for (double e : layer_end) {
    m.per_layer_us.push_back(e - prev);
    prev = e;
  }
  const Intervals comm_u    = merged(comm);
  const Intervals compute_u = merged(compute);
  m.comm_us                 = union_length(comm_u);
  m.compute_us              = union_length(compute_u) + m.step_work_us;
  busy[static_cast<int>(StreamId::compute)] += m.step_work_us;
  m.overlap_us      = intersection_length(comm_u, compute_u);
  m.exposed_comm_us = m.comm_us - m.overlap_us;
  for (int s = 0; s < num_streams; ++s)
    m.stream_busy_pct[s] = m.step_time_us > 0 ? 100.0 * busy[s] / m.step_time_us : 0;
  m.host_busy_pct = m.step_time_us > 0 ? 100.0 * host_busy / m.step_time_us : 0;
  if (n > 0)
    m.critical_path_us = CriticalPath(sched, tl).walk(last);
  if (m.step_work_us > 0)
    m.critical_path_us["step_work"] += m.step_work_us;
  return m;
}

} // namespace dbosim::sim

/* dbosim — ClusterEngine::replay: the exact max-plus evaluation of the cluster timeline when no resource is shared
 * inside a rank (see ClusterEngine::exact_replay_applies). Same records as the SimGrid run; tested equal to it. */
#include "base/InputError.hpp"
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/StepEngine.hpp"
#include "sim/schedules/OpCosts.hpp"
#include "sim/schedules/OpGraph.hpp"

#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <iterator>

namespace dbosim::sim {

std::string ClusterEngine::replay_inexact_reason() const
{
  for (const StepPlan& p : plans_)
    if (std::string why = sim::replay_inexact_reason(p); !why.empty())
      return why;
  return {};
}

namespace {

/** Times of every class by op (row v: its k classes side by side), so that each op reads its producers' rows whole:
 *  EP256 with 946 ops per rank does not fit in cache as one row per class. */
struct ReplayTimes {
  std::size_t k = 0;
  std::vector<double> host_begin, issue, dur, flight; ///< fixed: host issue relative to the step's start, durations
  std::vector<double> start, end, done;               ///< the step being replayed (absolute µs)
};

/** Each op's predecessors: a data producer is ready when its data has landed, a stream predecessor when its kernel
 *  has ended. */
struct Preds {
  std::vector<std::size_t> begin;             ///< op v's are [begin[v], begin[v + 1])
  std::vector<std::pair<OpVertex, bool>> ops; ///< (producer, data edge)
};

Preds predecessors(const OpDag& g, std::size_t n)
{
  Preds p;
  p.begin.assign(n + 1, 0);
  for (OpVertex v = 0; v < n; ++v) {
    for (auto [e, e_end] = boost::in_edges(v, g); e != e_end; ++e)
      p.ops.emplace_back(boost::source(*e, g), g[*e].kind == EdgeKind::data);
    p.begin[v + 1] = p.ops.size();
  }
  return p;
}

/** One step of the max-plus recursion over every class, from each class's `step_start`; `air_free`: when each rank's
 *  links are free for its next flight (StreamActors' flight actor: a flight sent while another is in the air starts
 *  when that one has landed for every rank; flights are sent from one stream, so the topological order visits them in
 *  their sending order). */
void replay_one_step(const std::vector<Op>& ops, const std::vector<OpVertex>& order, const Preds& preds,
                     const std::vector<double>& step_start, std::vector<double>& air_free, ReplayTimes& t)
{
  const std::size_t k = t.k;
  std::vector<double> s(k);
  for (OpVertex v : order) {
    const std::size_t r = v * k;
    for (std::size_t c = 0; c < k; ++c)
      s[c] = step_start[c] + t.issue[r + c];
    for (std::size_t i = preds.begin[v]; i < preds.begin[v + 1]; ++i) {
      const double* ready = &(preds.ops[i].second ? t.done : t.end)[preds.ops[i].first * k]; // producer / stream pred.
      for (std::size_t c = 0; c < k; ++c)
        s[c] = std::max(s[c], ready[c]);
    }
    double coll_end   = 0;
    const bool in_air = ops[v].flight_us > 0;
    for (std::size_t c = 0; c < k; ++c) {
      t.start[r + c] = s[c];
      t.end[r + c]   = s[c] + t.dur[r + c];
      // A send kernel ends alone; its data lands after its flight, which starts once the rank's previous one landed.
      t.done[r + c] = (in_air ? std::max(t.end[r + c], air_free[c]) : t.end[r + c]) + t.flight[r + c];
      coll_end      = std::max(coll_end, t.done[r + c]);
    }
    if (is_comm_kind(ops[v].kind)) { // a collective ends (lands) for every rank when its slowest rank's part does
      for (std::size_t c = 0; c < k; ++c)
        (in_air ? t.done : t.end)[r + c] = coll_end;
      if (in_air)
        std::fill(air_free.begin(), air_free.end(), coll_end);
      else
        std::copy_n(&t.end[r], k, &t.done[r]);
    }
  }
}

/** The records of the replayed step, from its start on each class. */
void write_records(const std::vector<Op>& sched_ops, std::size_t n, const ReplayTimes& t,
                   const std::vector<double>& step_start, ClusterTimeline& out)
{
  const std::size_t k = t.k;
  for (std::size_t c = 0; c < k; ++c) {
    std::vector<OpRecord>& ops = out.classes[c].ops;
    ops.assign(n, OpRecord{});
    const double t0 = step_start[c];
    for (OpVertex v = 0; v < n; ++v) {
      const std::size_t i  = v * k + c;
      ops[v].host_begin_us = t.host_begin[i];
      ops[v].issue_us      = t.issue[i];
      ops[v].start_us      = t.start[i] - t0;
      ops[v].end_us        = t.end[i] - t0;
      if (sched_ops[v].flight_us > 0)
        ops[v].arrive_us = t.done[i] - t0;
    }
  }
}

} // namespace

ClusterTimeline ClusterEngine::replay(int steps) const
{
  if (steps < 1)
    throw InternalError("ClusterEngine::replay: steps must be >= 1");
  if (!exact_replay_applies())
    throw InternalError("ClusterEngine::replay: ranks share resources (SM-resident comm kernels or host syncs); use "
                        "run()");
  const std::size_t k = plans_.size();
  const OpDag& g0     = sched_.graph->dag;
  const std::size_t n = sched_.num_ops();
  std::vector<OpVertex> order;
  boost::topological_sort(g0, std::back_inserter(order));
  std::reverse(order.begin(), order.end());

  // Host issue is the same every step, relative to the step's start (as TimelineEngine charges it).
  ReplayTimes t;
  t.k = k;
  for (std::vector<double>* row : {&t.host_begin, &t.issue, &t.dur, &t.flight, &t.start, &t.end, &t.done})
    row->resize(n * k);
  for (std::size_t c = 0; c < k; ++c) {
    const HostParams& hp              = plans_[c].host;
    const std::vector<double> host_us = host_costs_us(sched_, hp);
    double at                         = hp.cuda_graph || hp.piecewise ? hp.graph_launch_us : 0.0; // as host_loop
    for (OpVertex v : sched_.issue_order) {
      t.host_begin[v * k + c] = at;
      at += host_us[v];
      t.issue[v * k + c] = at;
    }
    for (OpVertex v = 0; v < n; ++v) {
      t.dur[v * k + c]    = stream_us_[c][v];
      t.flight[v * k + c] = flight_us_[c][v];
    }
  }
  const Preds preds = predecessors(g0, n);

  ClusterTimeline out;
  out.classes.assign(k, Timeline{});
  std::vector<double> step_start(k, 0.0), drained(k), air_free(k, 0.0);
  for (int step = 0; step < steps; ++step) {
    replay_one_step(sched_.ops, order, preds, step_start, air_free, t);
    std::copy(step_start.begin(), step_start.end(), drained.begin());
    for (std::size_t i = 0; i < n * k; i += k)
      for (std::size_t c = 0; c < k; ++c)
        drained[c] = std::max(drained[c], t.done[i + c]);
    double last = 0;
    for (std::size_t c = 0; c < k; ++c) {
      out.classes[c].step_time_us.push_back(drained[c] - step_start[c]);
      last = std::max(last, drained[c] - step_start[c]);
    }
    out.step_time_us.push_back(last);
    if (step + 1 < steps)
      step_start = drained;
  }
  write_records(sched_.ops, n, t, step_start, out);
  return out;
}

} // namespace dbosim::sim

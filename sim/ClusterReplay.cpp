/* dbosim — ClusterEngine::replay: the exact max-plus evaluation of the cluster timeline when no resource is shared
 * inside a rank (see ClusterEngine::exact_replay_applies). Same records as the SimGrid run; tested equal to it. */
#include "config/InputError.hpp"
#include "sim/ClusterEngine.hpp"
#include "sim/TimelineEngine.hpp"

#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <iterator>

namespace dbosim::sim {

bool ClusterEngine::exact_replay_applies() const
{
  for (const StepPlan& p : plans_)
    if (p.gpu.comm_uses_sms || p.host.host_sync_after_comm)
      return false;
  return true;
}

ClusterTimeline ClusterEngine::replay(int steps) const
{
  if (steps < 1)
    throw InternalError("ClusterEngine::replay: steps must be >= 1");
  if (!exact_replay_applies())
    throw InternalError("ClusterEngine::replay: ranks share resources (SM-resident comm kernels or host syncs); use "
                        "run()");
  const std::size_t k = plans_.size();
  const OpGraph& g0   = sched_.graph;
  const std::size_t n = sched_.num_ops();
  std::vector<OpVertex> order;
  boost::topological_sort(g0, std::back_inserter(order));
  std::reverse(order.begin(), order.end());

  // Per class: host costs (as TimelineEngine charges them); durations on their stream from the constructor.
  std::vector<std::vector<double>> host_cost(k, std::vector<double>(n));
  const std::vector<std::vector<double>>& dur = stream_us_;
  for (std::size_t c = 0; c < k; ++c) {
    TimelineEngine costs(sched_, plans_[c]);
    for (OpVertex v = 0; v < n; ++v)
      host_cost[c][v] = costs.host_cost_us(v);
  }

  // Each op's predecessors, once (the graph's in-edge lists are slow to walk for every class): a data producer is
  // ready when its data has landed, a stream predecessor when its kernel has ended.
  std::vector<std::size_t> pred_begin(n + 1, 0);
  std::vector<std::pair<OpVertex, bool>> preds; // (producer, data edge)
  for (OpVertex v = 0; v < n; ++v) {
    for (auto [e, e_end] = boost::in_edges(v, g0); e != e_end; ++e)
      preds.emplace_back(boost::source(*e, g0), g0[*e].kind == EdgeKind::data);
    pred_begin[v + 1] = preds.size();
  }

  ClusterTimeline out;
  out.classes.assign(k, Timeline{});
  std::vector<double> step_start(k, 0.0);
  std::vector<std::vector<double>> start(k, std::vector<double>(n)), end(k, std::vector<double>(n)),
      issue(k, std::vector<double>(n)), done(k, std::vector<double>(n));
  for (int step = 0; step < steps; ++step) {
    for (std::size_t c = 0; c < k; ++c) {
      Timeline& tl = out.classes[c];
      tl.ops.assign(n, OpRecord{});
      const HostParams& hp = plans_[c].host;
      double t             = step_start[c] + (hp.cuda_graph ? hp.graph_launch_us : 0.0);
      for (OpVertex v : sched_.issue_order) {
        tl.ops[v].host_begin_us = t - step_start[c];
        t += host_cost[c][v];
        issue[c][v]        = t;
        tl.ops[v].issue_us = t - step_start[c];
      }
    }
    for (OpVertex v : order) {
      const bool comm   = is_comm_kind(g0[v].kind);
      const bool flight = g0[v].flight_us > 0; // the send kernel ends alone; the data lands after its flight
      double coll_end   = 0;
      for (std::size_t c = 0; c < k; ++c) {
        double s                      = issue[c][v];
        const std::vector<double>& dc = done[c];
        const std::vector<double>& ec = end[c];
        for (std::size_t i = pred_begin[v]; i < pred_begin[v + 1]; ++i)
          s = std::max(s, preds[i].second ? dc[preds[i].first] : ec[preds[i].first]);
        start[c][v] = s;
        end[c][v]   = s + dur[c][v];
        done[c][v]  = end[c][v] + flight_us_[c][v];
        coll_end    = std::max(coll_end, done[c][v]);
      }
      for (std::size_t c = 0; c < k; ++c) {
        if (comm)
          (flight ? done : end)[c][v] = coll_end;
        if (!flight)
          done[c][v] = end[c][v];
        OpRecord& rec = out.classes[c].ops[v];
        rec.start_us  = start[c][v] - step_start[c];
        rec.end_us    = end[c][v] - step_start[c];
        if (flight)
          rec.arrive_us = done[c][v] - step_start[c];
      }
    }
    double last = 0;
    for (std::size_t c = 0; c < k; ++c) {
      double drained = step_start[c];
      for (OpVertex v = 0; v < n; ++v)
        drained = std::max(drained, done[c][v]);
      out.classes[c].step_time_us.push_back(drained - step_start[c]);
      last          = std::max(last, drained - step_start[c]);
      step_start[c] = drained;
    }
    out.step_time_us.push_back(last);
  }
  return out;
}

} // namespace dbosim::sim

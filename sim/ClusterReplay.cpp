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

  ClusterTimeline out;
  out.classes.assign(k, Timeline{});
  std::vector<double> step_start(k, 0.0);
  std::vector<std::vector<double>> start(k, std::vector<double>(n)), end(k, std::vector<double>(n)),
      issue(k, std::vector<double>(n));
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
      const bool comm = is_comm_kind(g0[v].kind);
      double coll_end = 0;
      for (std::size_t c = 0; c < k; ++c) {
        double s = issue[c][v];
        for (auto [e, e_end] = boost::in_edges(v, g0); e != e_end; ++e)
          s = std::max(s, end[c][boost::source(*e, g0)]); // stream predecessor or data producer
        start[c][v] = s;
        end[c][v]   = s + dur[c][v];
        coll_end    = std::max(coll_end, end[c][v]);
      }
      for (std::size_t c = 0; c < k; ++c) {
        if (comm)
          end[c][v] = coll_end;
        out.classes[c].ops[v].start_us = start[c][v] - step_start[c];
        out.classes[c].ops[v].end_us   = end[c][v] - step_start[c];
      }
    }
    double last = 0;
    for (std::size_t c = 0; c < k; ++c) {
      double drained = step_start[c];
      for (OpVertex v = 0; v < n; ++v)
        drained = std::max(drained, end[c][v]);
      out.classes[c].step_time_us.push_back(drained - step_start[c]);
      last          = std::max(last, drained - step_start[c]);
      step_start[c] = drained;
    }
    out.step_time_us.push_back(last);
  }
  return out;
}

} // namespace dbosim::sim

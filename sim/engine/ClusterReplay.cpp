/* dbosim — ClusterEngine::replay: the exact max-plus evaluation of the cluster timeline when no resource is shared
 * inside a rank (see ClusterEngine::exact_replay_applies). Same records as the SimGrid run; tested equal to it. */
#include "base/InputError.hpp"
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/StepEngine.hpp"
#include "sim/engine/TimelineEngine.hpp"

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

  // Times are kept by op then class (row v: its k classes side by side), so that each op reads its producers' rows
  // whole: EP256 with 946 ops per rank does not fit in cache as one row per class.
  // Host issue is the same every step, relative to the step's start (as TimelineEngine charges it).
  std::vector<double> host_begin(n * k), issue(n * k), dur(n * k), flight(n * k);
  for (std::size_t c = 0; c < k; ++c) {
    TimelineEngine costs(sched_, plans_[c]);
    const HostParams& hp = plans_[c].host;
    double t             = hp.cuda_graph || hp.piecewise ? hp.graph_launch_us : 0.0; // as host_loop
    for (OpVertex v : sched_.issue_order) {
      host_begin[v * k + c] = t;
      t += costs.host_cost_us(v);
      issue[v * k + c] = t;
    }
    for (OpVertex v = 0; v < n; ++v) {
      dur[v * k + c]    = stream_us_[c][v];
      flight[v * k + c] = flight_us_[c][v];
    }
  }

  // Each op's predecessors, once: a data producer is ready when its data has landed, a stream predecessor when its
  // kernel has ended.
  std::vector<std::size_t> pred_begin(n + 1, 0);
  std::vector<std::pair<OpVertex, bool>> preds; // (producer, data edge)
  for (OpVertex v = 0; v < n; ++v) {
    for (auto [e, e_end] = boost::in_edges(v, g0); e != e_end; ++e)
      preds.emplace_back(boost::source(*e, g0), g0[*e].kind == EdgeKind::data);
    pred_begin[v + 1] = preds.size();
  }

  ClusterTimeline out;
  out.classes.assign(k, Timeline{});
  std::vector<double> step_start(k, 0.0), drained(k), s(k);
  std::vector<double> start(n * k), end(n * k), done(n * k);
  // A rank's flights take its links one after the other (StreamActors' flight actor): a flight sent while another is
  // in the air starts when that one has landed for every rank. Flights are sent from one stream, so the topological
  // order visits them in their sending order.
  std::vector<double> air_free(k, 0.0);
  for (int step = 0; step < steps; ++step) {
    for (OpVertex v : order) {
      const std::size_t r = v * k;
      for (std::size_t c = 0; c < k; ++c)
        s[c] = step_start[c] + issue[r + c];
      for (std::size_t i = pred_begin[v]; i < pred_begin[v + 1]; ++i) {
        const double* ready = &(preds[i].second ? done : end)[preds[i].first * k]; // producer / stream predecessor
        for (std::size_t c = 0; c < k; ++c)
          s[c] = std::max(s[c], ready[c]);
      }
      double coll_end   = 0;
      const bool in_air = g0[v].flight_us > 0;
      for (std::size_t c = 0; c < k; ++c) {
        start[r + c] = s[c];
        end[r + c]   = s[c] + dur[r + c];
        // A send kernel ends alone; its data lands after its flight, which starts once the rank's previous one landed.
        done[r + c] = (in_air ? std::max(end[r + c], air_free[c]) : end[r + c]) + flight[r + c];
        coll_end    = std::max(coll_end, done[r + c]);
      }
      if (is_comm_kind(g0[v].kind)) { // a collective ends (lands) for every rank when its slowest rank's part does
        for (std::size_t c = 0; c < k; ++c)
          (in_air ? done : end)[r + c] = coll_end;
        if (in_air)
          std::fill(air_free.begin(), air_free.end(), coll_end);
        else
          std::copy_n(&end[r], k, &done[r]);
      }
    }
    std::copy(step_start.begin(), step_start.end(), drained.begin());
    for (std::size_t i = 0; i < n * k; i += k)
      for (std::size_t c = 0; c < k; ++c)
        drained[c] = std::max(drained[c], done[i + c]);
    double last = 0;
    for (std::size_t c = 0; c < k; ++c) {
      out.classes[c].step_time_us.push_back(drained[c] - step_start[c]);
      last = std::max(last, drained[c] - step_start[c]);
    }
    out.step_time_us.push_back(last);
    if (step + 1 < steps) {
      step_start = drained;
      continue;
    }
    // The records: the last step's, from its start on each class.
    for (std::size_t c = 0; c < k; ++c) {
      std::vector<OpRecord>& ops = out.classes[c].ops;
      ops.assign(n, OpRecord{});
      const double t0 = step_start[c];
      for (OpVertex v = 0; v < n; ++v) {
        const std::size_t i  = v * k + c;
        ops[v].host_begin_us = host_begin[i];
        ops[v].issue_us      = issue[i];
        ops[v].start_us      = start[i] - t0;
        ops[v].end_us        = end[i] - t0;
        if (g0[v].flight_us > 0)
          ops[v].arrive_us = done[i] - t0;
      }
    }
  }
  return out;
}

} // namespace dbosim::sim

#include "sim/schedules/OpCosts.hpp"

#include "base/InputError.hpp"
#include "sim/schedules/OpGraph.hpp"

namespace dbosim::sim {

std::vector<double> host_costs_us(const Schedule& sched, const HostParams& hp)
{
  const OpDag& g = sched.graph->dag;
  std::vector<double> cost_us(sched.num_ops(), 0);
  int prev_thread = -1;
  for (OpVertex v : sched.issue_order) {
    const Op& op  = sched.ops[v];
    double events = 0;
    for (auto [e, end] = boost::in_edges(v, g); e != end; ++e)
      if (g[*e].kind == EdgeKind::data && sched.ops[boost::source(*e, g)].stream != op.stream)
        events += hp.event_us; // cudaStreamWaitEvent
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e)
      if (g[*e].kind == EdgeKind::data && sched.ops[boost::target(*e, g)].stream != op.stream) {
        events += hp.event_us; // one cudaEventRecord serves every consumer
        break;
      }
    const double handoff = prev_thread >= 0 && op.host_thread != prev_thread ? hp.handoff_us : 0.0;
    prev_thread          = op.host_thread;
    if (hp.cuda_graph) // a graph replay issues with no per-kernel host cost
      cost_us[v] = 0;
    else if (hp.piecewise) // the splitting ops' kernels eagerly, one launch per piece; events are captured in pieces
      cost_us[v] = op.eager_kernels * hp.launch_cpu_us + op.graph_launches * hp.graph_launch_us + handoff;
    else
      cost_us[v] = op.kernels * hp.launch_cpu_us + events + handoff;
  }
  return cost_us;
}

OpDurations plan_op_durations(const Schedule& sched, const StepPlan& p)
{
  OpDurations out;
  out.stream_us.assign(sched.num_ops(), 0);
  out.flight_us.assign(sched.num_ops(), 0);
  for (OpVertex v = 0; v < sched.num_ops(); ++v) {
    const Op& op = sched.ops[v];
    const OpSpec* spec =
        op.ubatch < p.num_ubatches() ? p.ubatches[op.ubatch].find(p.moe_layer(op.layer), op.kind) : nullptr;
    if (!spec || p.num_layers != sched.num_layers || (spec->flight_us > 0) != (op.flight_us > 0))
      throw InternalError("ClusterEngine: a rank class's plan lacks an op of the schedule (or its recv hook)");
    out.stream_us[v] = stream_duration_us(*spec, p);
    out.flight_us[v] = spec->flight_us;
  }
  return out;
}

} // namespace dbosim::sim

/* dbosim — what each op of a schedule costs its stream and the host thread that issues it (µs), read off the plan's
 * op durations, kernel counts and host parameters: the SimGrid actors and the max-plus replay run the same figures. */
#pragma once
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/Schedule.hpp"

#include <vector>

namespace dbosim::sim {

/** @brief GPU-side gaps of an op's kernels (µs): in a full graph each kernel's graph gap; eager each kernel's eager
 *  gap; under piecewise graphs the graph gap for the captured kernels, the eager gap for the splitting ops' and each
 *  piece's boundary gap. `o` is an Op or an OpSpec. */
template <class OpLike> double kernel_gaps_us(const OpLike& o, const HostParams& hp)
{
  if (hp.cuda_graph)
    return o.kernels * hp.kernel_gap_us;
  if (hp.piecewise)
    return (o.kernels - o.eager_kernels) * hp.kernel_gap_us + o.eager_kernels * hp.eager_kernel_gap_us +
           o.graph_launches * hp.piece_gap_us;
  return o.kernels * hp.eager_kernel_gap_us;
}

/** @brief An op's duration on its stream (µs): compute under an SM partition runs its partitioned duration; its
 *  kernels add their GPU-side gaps (kernel_gaps_us). `o` is an Op or an OpSpec. */
template <class OpLike> double stream_duration_us(const OpLike& o, const StepPlan& plan)
{
  const bool partitioned = plan.gpu.comm_sms > 0 && !is_comm_kind(o.kind);
  return (partitioned ? o.partitioned_duration_us : o.duration_us) + kernel_gaps_us(o, plan.host);
}

/** @brief Host CPU time (µs) spent before each op (by vertex) is on its stream: launches, event records/waits,
 *  hand-offs between the micro-batch threads; 0 under a full CUDA graph (the replay issues everything after one graph
 *  launch). */
std::vector<double> host_costs_us(const Schedule& sched, const HostParams& hp);

/** @brief Each op's duration on its stream (stream_duration_us) and its flight before its recv hook (µs), by vertex,
 *  read off `plan`'s op specs: a rank class's own durations for the schedule every rank runs. */
struct OpDurations {
  std::vector<double> stream_us, flight_us;
};
/** @throws InternalError when `plan` lacks an op of the schedule (or its recv hook). */
OpDurations plan_op_durations(const Schedule& sched, const StepPlan& plan);

} // namespace dbosim::sim

/* dbosim — replays a Schedule on SimGrid: one GPU host (SM partitions as set_bound confinement), a fabric host for
 * the collectives, a compute-stream and a comm-stream actor that run their ops in FIFO order, and a host actor that
 * issues ops with the profile's per-launch CPU cost. CUDA events are pending-condition counters: an op starts when
 * it is issued and every cross-stream producer has ended. SimGrid runs one simulation per process: call run() once. */
#pragma once
#include "sim/engine/Timeline.hpp"
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/Schedule.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

class TimelineEngine {
public:
  /** @brief Precomputes per-op host costs and start conditions; `sched` and `plan` must outlive the engine. */
  TimelineEngine(const Schedule& sched, const StepPlan& plan);

  /** @brief Simulates `steps` back-to-back steps (the host starts a step when the previous one has drained) and
   *  returns the last step's timeline. `simgrid_args` are extra `--cfg`/`--log` options (after dbosim's defaults). */
  Timeline run(int steps = 1, const std::vector<std::string>& simgrid_args = {});

  /** @brief Host CPU time (µs) spent before op `v` is on its stream: launches, event records/waits, hand-offs;
   *  0 under a full CUDA graph (the replay issues everything after one graph launch). */
  double host_cost_us(OpVertex v) const { return host_cost_us_[v]; }

private:
  const Schedule& sched_;
  const StepPlan& plan_;
  std::vector<double> host_cost_us_;
};

} // namespace dbosim::sim

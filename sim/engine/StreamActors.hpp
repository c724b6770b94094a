/* dbosim — one rank's SimGrid actors, shared by TimelineEngine (one rank) and ClusterEngine (one per rank class):
 * a compute-stream and a comm-stream actor that run their ops in FIFO order, and a host actor that issues them.
 * CUDA events are pending-condition counters: an op starts when it is issued and every cross-stream producer has
 * ended. */
#pragma once
#include "sim/engine/Timeline.hpp"
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/OpCosts.hpp"
#include "sim/schedules/Schedule.hpp"

#include <simgrid/s4u.hpp>

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dbosim::sim {

/*** Units ***/
// The GPU host computes one unit per SM per microsecond (speed sm_count * 1e6 per simulated second): a compute op of
// d µs on s SMs is an Exec of d*s units bounded at s*1e6. The fabric host runs one unit per microsecond.
inline constexpr double units_per_s = 1e6;
inline constexpr double us          = 1e-6;
// Weight of the comm kernels' SM share: high enough that max-min gives them their bound before compute.
inline constexpr double comm_priority = 1e6;
// Work of an activity that lasts until it is cancelled (a comm kernel's SM share, compute's drag on the comm).
inline constexpr double open_ended_work = 1e18;

/** @brief Run state of one rank's streams and host thread. */
struct StreamRun {
  const Schedule* sched      = nullptr;
  const StepPlan* plan       = nullptr;
  int steps                  = 1;
  simgrid::s4u::Host* gpu    = nullptr;
  simgrid::s4u::Host* fabric = nullptr;
  /** Called on the stream actor when a comm op's own part has ended, before the op is recorded as ended (the
   *  cluster waits there for the other ranks); empty = none. */
  std::function<void(OpVertex, int stream)> after_comm;

  std::vector<double> host_cost_us;
  std::vector<int> initial_pending;                   ///< 1 (the issue) + cross-stream data producers
  std::vector<std::vector<OpVertex>> cross_consumers; ///< data consumers on the other stream
  std::vector<int> pending;
  std::vector<int> done_step;

  bool wait_for_sms      = false; ///< comm kernels need whole SMs and share them with compute (no partition)
  bool compute_running   = false; ///< an op of the compute stream is executing
  int sms_waiter         = -1;    ///< the stream whose comm op waits for the running compute op to end
  double comm_drag_bound = 0;     ///< units/s the running compute takes from the comm on the fabric (0 = none)

  std::array<simgrid::s4u::ActorPtr, num_streams> stream_actor;
  std::array<long, num_streams> stream_waiting{-1, -1};
  simgrid::s4u::ActorPtr host_actor;
  /** A collective in flight: its op, the step and the stream it was sent on. */
  struct Flight {
    OpVertex op;
    int step;
    int stream;
  };
  simgrid::s4u::ActorPtr flight_actor; ///< runs the flights (null when no op has one)
  std::deque<Flight> flights;          ///< sent, not yet in flight
  bool flight_idle        = false;     ///< the flight actor waits for a send
  bool flight_busy        = false;     ///< a flight is on the fabric (or waits for the other ranks)
  long host_waiting_op    = -1;
  bool host_waiting_drain = false;
  std::size_t ops_done    = 0;
  double step_start_s     = 0;

  // Per-op activity parameters, fixed for the run.
  std::vector<double> gpu_work;    ///< compute: SM·µs on the GPU host; comm: SM·µs of its SM share (0 = none)
  std::vector<double> gpu_bound;   ///< units/s; 0 = unbounded
  std::vector<double> fabric_work; ///< comm: µs on the fabric (with a recv hook: its flight)
  /** The µs an op holds its stream with no resource shared (-1 = not such an op): a send kernel and a recv hook of a
   *  collective whose kernels hold no SMs (DeepEP low-latency: like its whole kernel without hooks, they are not
   *  modelled as slowing compute beside them, which keeps the cluster's max-plus replay exact). */
  std::vector<double> timed_us;

  Timeline timeline;
};

/** @brief Fills `st`'s start conditions and per-op activities from the schedule, the plan's GPU parameters, the
 *  per-op host costs (µs), each op's duration on its stream (µs, partitioned where an SM partition holds, kernel
 *  gaps included) and each collective's flight before its recv hook (µs; used where the schedule's op has one).
 *  `st.sched` and `st.plan` must be set. */
void prepare_stream_run(StreamRun& st, const std::vector<double>& host_cost_us, const std::vector<double>& stream_us,
                        const std::vector<double>& flight_us);

/** @brief Creates the two stream actors on `st.gpu` and the host actor on `cpu`, named `<prefix>compute_stream`,
 *  `<prefix>comm_stream` and `<prefix>host`. */
void start_stream_actors(StreamRun& st, simgrid::s4u::Host* cpu, const std::string& prefix);

/** @brief A SimGrid engine with dbosim's defaults then `simgrid_args`; `who` names the caller in the errors.
 *  @throws InternalError on a second call in this process (SimGrid cannot reset); InputError on a bad option. */
std::unique_ptr<simgrid::s4u::Engine> make_engine(const std::string& who, const std::vector<std::string>& simgrid_args);

} // namespace dbosim::sim

/* dbosim — a schedule: the ops of one step, their dependencies as a DAG (sim/schedules/OpGraph.hpp, a Boost.Graph
 * that only the sources walking the edges include), stream assignment and host issue order.
 * A schedule is data: builders (sim/schedules/) only choose the issue order and the stream of each op; the data
 * dependencies between ops follow from the layer's dataflow (ScheduleBuilder::issue adds them). */
#pragma once
#include "sim/plan/Op.hpp"
#include "sim/plan/StepPlan.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief An op's index: in Schedule::ops and as a vertex of its OpGraph. */
using OpVertex = std::size_t;
/** @brief data: the consumer needs the producer's output (a CUDA event wait when they sit on different streams);
 *  stream: the two ops are consecutive on one stream (FIFO order). */
enum class EdgeKind : std::uint8_t { data, stream };
struct OpEdge {
  EdgeKind kind = EdgeKind::data;
};
struct OpGraph; ///< sim/schedules/OpGraph.hpp: the ops' dependencies

struct Schedule {
  Schedule(); ///< no ops, an empty graph
  std::string name;
  int num_layers      = 0;
  int num_ubatches    = 1;
  double step_work_us = 0; ///< StepPlan::step_work_us: serial after the last op, on the compute stream
  std::vector<Op> ops;     ///< by OpVertex
  /** @brief The ops' data and stream dependencies, complete when the builder returns the schedule (copies share
   *  it); never null. */
  std::shared_ptr<const OpGraph> graph;
  /** @brief Host issue order over all threads. DBO's micro-batch threads hand the CPU to each other (yield), so
   *  only one issues at a time and their interleaving is one sequence. */
  std::vector<OpVertex> issue_order;
  std::array<std::vector<OpVertex>, num_streams> stream_order; ///< FIFO order of each stream
  std::size_t num_ops() const { return ops.size(); }
};

/** @brief Sets each op's numbers (duration, partitioned duration, kernels, graph launches, flight, dummy) and the
 *  step's work from `plan`, as the builder sets them: a schedule built for another plan of the same structure (the
 *  same ops in each micro-batch's layers; build_schedule keeps schedules by it) becomes this plan's.
 *  @throws InternalError when the plan lacks an op of the schedule. */
void set_op_numbers(Schedule& sched, const StepPlan& plan);

/** @brief Appends ops to a Schedule in issue order and derives their data dependencies:
 *  A0(L) <- C(L-1), S(L-1) (MoE) or MLP(L-1) (dense); A1 <- A0; D <- A1; MLP <- D (MoE) or A1 (dense);
 *  S <- A1; C <- MLP. With recv hooks (the plan lists D_recv/C_recv): D_recv <- D, C_recv <- C, and their
 *  consumers read the recv hook instead (MLP <- D_recv, A0(L) <- C_recv(L-1)). A dependency must be issued before
 *  its consumer (a CUDA event wait on an unrecorded event does not wait), else InternalError. */
class ScheduleBuilder {
public:
  ScheduleBuilder(const StepPlan& plan, std::string name);
  /** @brief Issues op `k` of `layer` for micro-batch `ub` on stream `s` by that micro-batch's host thread.
   *  Ops the layer does not have (D/C on dense layers, S without shared experts, recv hooks without hooks) are
   *  skipped. Unless place_recv_hooks() was called, a D or C with a recv hook is followed at once by its hook. */
  void issue(OpKind k, int layer, int ub, StreamId s);
  /** @brief Issues as issue(), and the op also waits for the op last issued on stream `tail` (of any micro-batch): a
   *  CUDA event recorded on that stream when the op is issued, not on its own producer. */
  void issue_after_tail(OpKind k, int layer, int ub, StreamId s, StreamId tail);
  /** @brief The schedule places the recv hooks itself: issue_recv_hook, at the point where the other micro-batch's
   *  thread runs them (vLLM's dbo_maybe_run_recv_hook). */
  void place_recv_hooks() { explicit_hooks_ = true; }
  /** @brief Issues the recv hook of collective `k` (D or C) of `layer`, micro-batch `ub`, on stream `s`, by host
   *  thread `host_thread`; nothing when the plan has no hook for it. */
  void issue_recv_hook(OpKind k, int layer, int ub, StreamId s, int host_thread);
  /** @brief Issues the layer's ops of `ub` in serial order (A0 A1 D MLP S C), compute ops on the compute stream and
   *  D/C on `comm_stream`. */
  void issue_serial_layer(int layer, int ub, StreamId comm_stream);
  const StepPlan& plan() const { return plan_; }
  Schedule finish();

private:
  const StepPlan& plan_;
  Schedule sched_;
  std::shared_ptr<OpGraph> graph_; ///< sched_.graph while it is built
  std::vector<int> issued_;        ///< [(ub * layers + layer) * kinds + kind] -> vertex + 1 (0 = not issued)
  bool explicit_hooks_ = false;
  int& slot(int ub, int layer, OpKind k);
  bool has(int ub, int layer, OpKind k) const;
  void issue_on_thread(OpKind k, int layer, int ub, StreamId s, int host_thread);
  void add_dep(OpVertex consumer, int ub, int layer, OpKind k);
};

} // namespace dbosim::sim

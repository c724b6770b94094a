/* dbosim — the engine's input: one step of one rank, as plain data (built from a Deployment and a step shape by
 * StepPlanBuilder, or by hand in tests). The engine never sees model names: only op costs, streams and host/GPU
 * parameters. */
#pragma once
#include "config/ScheduleTable.hpp"
#include "sim/plan/Op.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Op costs of one micro-batch shape for a dense and a MoE layer, in serial order (A0 A1 [D] MLP [S] [C]). */
struct UbatchCosts {
  int tokens      = 0;       ///< tokens the GPU runs for this micro-batch (padded)
  int real_tokens = 0;       ///< tokens of this rank in it (0 = a dummy micro-batch)
  std::vector<OpSpec> dense; ///< A0 A1 MLP
  std::vector<OpSpec> moe;   ///< A0 A1 D MLP [S] C
  const OpSpec* find(bool moe_layer, OpKind k) const;
};

/** @brief The op of kind `k` in `ops` (null when absent), to be edited. */
OpSpec* find_spec(std::vector<OpSpec>& ops, OpKind k);
/** @brief Sets collective `k` (D or C) of `ops` to last `total_us` alone on the fabric, of which `recv_us` is its
 *  receive kernel: with a recv hook in `ops` (see split_recv_hook), the send kernel takes no time of its own, the
 *  data flies total - recv, then the hook runs recv; without one, the collective lasts total_us. No-op when `ops` has
 *  no `k`. */
void set_collective_us(std::vector<OpSpec>& ops, OpKind k, double total_us, double recv_us);
/** @brief Splits collective `k` of `ops` into a send kernel and its recv hook (one kernel launch each), keeping the
 *  time it takes alone: DeepEP low-latency with return_recv_hook, as vLLM runs it under DBO. */
void split_recv_hook(std::vector<OpSpec>& ops, OpKind k, double recv_us);

/** @brief The host side: what issuing costs the CPU. */
struct HostParams {
  bool cuda_graph = false; ///< full CUDA graph: the step replays with no per-kernel host cost
  /** Piecewise CUDA graphs (vLLM's CUDAGraphMode.PIECEWISE): the kernels between splitting ops are captured in
   *  graphs, one launch per piece (Op::graph_launches), the splitting ops' kernels run eagerly (Op::eager_kernels). */
  bool piecewise         = false;
  double launch_cpu_us   = 0; ///< eager: host time per kernel launch
  double event_us        = 0; ///< eager: host time per cudaEventRecord / cudaStreamWaitEvent
  double handoff_us      = 0; ///< eager: a DBO CPU hand-off (yield) between micro-batch threads
  double graph_launch_us = 0; ///< graph: host time of one graph launch (the whole step's, or one piece's)
  /** GPU-side gap per kernel inside a CUDA graph (the profile's graph_replay_kernel_us: the gap between kernels when
   *  the host is not the limit). */
  double kernel_gap_us = 0;
  /** GPU-side gap per eagerly launched kernel, the host ahead (the profile's eager_kernel_gap; falls back to
   *  kernel_gap_us). */
  double eager_kernel_gap_us = 0;
  /** GPU time each piece's graph launch adds at its boundary, beyond its kernels' gaps (graph_piece_gap). */
  double piece_gap_us       = 0;
  double stream_sync_us     = 0;     ///< host synchronize round trip
  bool host_sync_after_comm = false; ///< block the host until the comm stream drains after each D and C
};

/** @brief The GPU side: SMs and how concurrent kernels share them. */
struct GpuParams {
  int sm_count                    = 132;
  int comm_sms                    = 0;     ///< > 0: SM partition, comm kernels hold these, compute runs on the rest
  bool comm_uses_sms              = false; ///< comm kernels are SM-resident copy kernels (DeepEP high-throughput, NCCL)
  double interference_shared      = 1;     ///< compute slowdown beside an SM-using comm kernel, no partition (>= 1)
  double interference_partitioned = 1;     ///< compute slowdown beside a comm kernel inside a partition (>= 1)
  double comm_slowdown_shared     = 1;     ///< comm-kernel slowdown while compute runs beside it, no partition (>= 1)
  double comm_slowdown_partitioned = 1;    ///< comm-kernel slowdown while compute runs beside it, partitioned (>= 1)
  /// The comm kernel's CTA leaves no room for a compute CTA on its SM (its shared memory): on shared SMs it gets its
  /// SMs only as the running compute kernel's CTAs retire, modelled as: it starts when that compute kernel ends.
  bool comm_needs_whole_sms = false;
};

struct StepPlan {
  ScheduleId schedule = ScheduleId::serial; ///< its row of config/ScheduleTable.hpp
  int num_layers      = 0;
  int first_k_dense   = 0;     ///< leading dense layers (no D/C)
  bool prefill        = false; ///< a prefill step (schedules that order the phases differently read it)
  /** The engine's DBO collectives wait on the compute stream's tail as the host finds it after a yield, not on their
   *  own micro-batch's compute (vLLM's DeepEP high-throughput prepare/finalize before its event was captured ahead of
   *  the yield: config/EngineTable.hpp, dbo_ht_waits_compute_tail). The dbo schedule then issues in that
   *  prepare/finalize's host order. */
  bool collectives_wait_compute_tail = false;
  std::vector<UbatchCosts> ubatches; ///< one per micro-batch (1 = unsplit)
  HostParams host;
  GpuParams gpu;
  std::vector<std::string> notes; ///< decisions taken while building the plan (threshold, forced modes, ...)
  /** The step's work outside the layers (embedding, final norm, LM head over the sampled positions, sampler) on the
   *  whole batch, serial after the last layer of every micro-batch: its kernels' time plus their launch gaps. */
  double step_work_us   = 0;
  int step_work_kernels = 0;
  /** Under a skewed expert load (models::CommSetup::expert_load): the busiest EP rank's MoE layers run its MLP, D
   *  and C; this is how much longer they take than a mean rank's, over all MoE layers and micro-batches: the time a
   *  mean rank's DeepEP kernels spin waiting for it (0 under ideal routing). Included in the step, not added. */
  double expert_spin_us = 0;
  double hot_rank_load  = 1.0; ///< the busiest rank's load over the mean (largest over the micro-batches)

  bool moe_layer(int layer) const { return layer >= first_k_dense; }
  int num_ubatches() const { return static_cast<int>(ubatches.size()); }
};

} // namespace dbosim::sim

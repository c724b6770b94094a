/* dbosim — a StepTimeOracle over the timeline engine. With the SimGrid engine (one simulation per process) each step
 * shape is simulated in a forked child (the scenario's deployment at the shape, DP padding to the shape's tokens); up
 * to `jobs` children run at once and pass their StepTime back through a pipe. With `replay` or `auto` a shape whose
 * replay is exact (sim/engine/StepEngine) is replayed in this process, the others (auto) in SimGrid children as above.
 * The children are forked by a helper process the oracle forks once, at its first such shape, while this process's
 * heap is still small: a fork of this process at every shape made both it and each child take a copy-on-write fault
 * on each page they then wrote, and each child allocate in this process's fragmented heap.
 */
#pragma once
#include "config/Scenario.hpp"
#include "models/OpCost.hpp"
#include "models/OpMemo.hpp"
#include "models/SpecDecode.hpp"
#include "serving/StepTimeOracle.hpp"
#include "sim/engine/StepEngine.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dbosim::serving {

class StepDiskTable;
class StepChildServer;

/** @brief Costs kept across the exact shapes of one deployment (numbers only: built under models::QuietCosts): with
 *  no SM partition A0 and A1 by their kernels' keys (models::AttentionMemo: only the kernels that read the context
 *  re-timed); under one, decode shapes' A0 by models::attention_a0_key (the ranks of a decode step with equal tokens
 *  share it whatever their KV lengths) with its parts; the step's work outside the layers by models::step_work_key
 *  (tokens and batch); the draft's passes by models::DraftMemo; the replayed shapes' MoE ops after attention by tokens.
 */
struct RankWorkMemo {
  models::AttentionMemo attention;
  models::DraftMemo draft; ///< the draft module's passes (speculative decoding)
  std::map<models::StepShape, models::OpCost> a0;
  std::map<models::StepShape, models::OpCost> step_work;
  std::map<int, models::MoeOpsMemo> moe_ops; ///< by comm_sms (sim::MoeOpsMemos): the bucketed shapes' MoE layers after
                                             ///< attention (EngineOracle::simulate's replays)
};

class EngineOracle : public StepTimeOracle {
public:
  /** @brief `jobs` 0: the machine's cores, or DBOSIM_ORACLE_JOBS when set (the sweep runner sets 1 per point). */
  /** `share_shapes`: take and leave step times and rank work in this process's table of shapes by
   *  Scenario::step_fingerprint, so that points of a sweep that differ only in their request stream simulate each
   *  shape once. Only for a scenario as loaded from its file (a Scenario changed in code keeps its file's
   *  fingerprint). */
  /** With the on-disk step cache on (serving/StepDiskCache: DBOSIM_STEP_CACHE), a shape found there is not simulated,
   *  and the shapes simulated here are added to it when the oracle ends (with share_shapes, when its worker ends a
   *  group of points: serving::save_step_disk_tables). */
  explicit EngineOracle(const Scenario& s, int jobs = 0, std::vector<std::string> simgrid_args = {},
                        sim::EngineKind engine = sim::EngineKind::simgrid, bool share_shapes = false);
  ~EngineOracle() override;
  EngineOracle(const EngineOracle&)            = delete;
  EngineOracle& operator=(const EngineOracle&) = delete;
  std::vector<StepTime> simulate(const std::vector<StepKey>& keys) override;
  /** @brief On the SimGrid engine (every shape a child, up to `jobs` at once); `replay` and `auto` replay shapes in
   *  this process. By the engine alone, not the machine's cores, so that a run's outputs do not depend on them. */
  bool batches_in_parallel() const override { return engine_ == sim::EngineKind::simgrid; }
  /** @brief From the step's plan, in this process (no SimGrid). */
  RankWork rank_work(const StepKey& key) override;
  /** @brief Shapes simulated so far (in child processes or replayed here). */
  long simulated() const { return simulated_; }
  /** @brief Of those, the shapes replayed in this process. */
  long replayed() const { return replayed_; }

private:
  const Scenario& scenario_;
  int jobs_;
  std::vector<std::string> simgrid_args_;
  sim::EngineKind engine_;
  bool share_shapes_;
  std::string work_owner_; ///< whose rank work and memo this process's shared tables hold (the fingerprint's)
  StepDiskTable* disk_times_ = nullptr; ///< the on-disk cache's tables (nullptr: off)
  StepDiskTable* disk_work_  = nullptr;
  long simulated_            = 0;
  long replayed_             = 0;
  /** The process that forks the step children (see EngineOracle.cpp), started at the first shape that needs one. */
  std::unique_ptr<StepChildServer> children_;
  RankWorkMemo rank_work_memo_; ///< rank_work's costs kept across its shapes (without share_shapes)
  /** The costs kept across shapes: with share_shapes this process's for the scenario fingerprint (the points that
   *  share shapes share them), else rank_work_memo_. */
  RankWorkMemo& memo();
};

/** @brief One rank's own work at `key` (RankWork) from the plan the engine would run: no SimGrid. `memo`: costs of
 *  `d` kept across calls (nullptr: each op costed whole, none kept beyond this call); the work is the same bit for
 *  bit. */
RankWork rank_work_here(const Deployment& d, const StepKey& key, RankWorkMemo* memo = nullptr);

/** @brief One step of `d` at `key`, in this process on `engine` (simgrid starts SimGrid: once per process). */
StepTime simulate_step_here(const Deployment& d, const StepKey& key, const std::vector<std::string>& simgrid_args = {},
                            sim::EngineKind engine = sim::EngineKind::simgrid);

} // namespace dbosim::serving

/* dbosim — from a Deployment and a step shape to the engine's StepPlan: vLLM's DBO rules (threshold, DP padding, split
 * at padded/2, dummy micro-batches), CUDA-graph eligibility, SM partition and host costs from the profile, op costs per
 * micro-batch shape from the cost models. */
#pragma once
#include "config/Scenario.hpp"
#include "sim/plan/StepPlan.hpp"

#include <functional>
#include <map>
#include <string>

namespace dbosim::sim {

/** @brief Where op costs come from: the models (model_cost_source) or, in tests, a synthetic function. */
struct CostSource {
  /** @brief Costs of one layer for one micro-batch shape; `comm_sms`: the SMs an SM-resident comm kernel holds
   *  (the plan's SM partition, 0 = none), which bounds its copy bandwidth. */
  std::function<models::LayerCosts(const models::StepShape& shape, bool moe_layer, int comm_sms)> layer;
  /** @brief Duration (µs) of a compute op confined to `sms` SMs. */
  std::function<double(const models::OpCost& op, int sms)> on_sms;
  /** @brief The routed experts' op alone for one rank's tokens (the cluster plan re-costs it per rank); empty: the
   *  MLP of `layer` is used. */
  std::function<models::OpCost(const models::StepShape& shape)> mlp;
  /** @brief The step's work outside the layers (embedding, final norm, LM head, sampler) for the rank's whole shape;
   *  empty: none (synthetic plans). */
  std::function<models::OpCost(const models::StepShape& shape)> step_work = {};
};

/** The MoE layers' ops after attention of one deployment's plans, by their SM partition (comm_sms). */
using MoeOpsMemos = std::map<int, models::MoeOpsMemo>;

/** @brief The cost models of the deployment's model and profile (models::layer_costs, models::duration_on_sms_us);
 *  they read `d`, which must outlive them. `moe_ops` (kept across plans of `d`, used for costs without explanations:
 *  models::QuietCosts): the MoE layers' ops after attention from it; nullptr: none kept beyond the plan. */
CostSource model_cost_source(const Deployment& d, MoeOpsMemos* moe_ops = nullptr);

/** @brief The deployment's dispatch/combine setup (network facts, node size, oversubscription, routing), shared by the
 *  single-rank and the cluster plans so both cost D and C by the same model. */
models::CommSetup comm_setup(const Deployment& sc, int comm_sms);

struct PlanOptions {
  std::string schedule;         ///< a registry name; empty: serial, async_combine or dbo from the overlap config
  int max_tokens_across_dp = 0; ///< DP padding target; 0: identical ranks (this rank's tokens)
  /** vLLM micro-batches a step only when every DP rank wants to (vllm/v1/worker/dp_utils.py: all ranks' own,
   *  unpadded tokens reach their DBO threshold; an idle rank's dummy batch has 1): false when some rank does not. */
  bool dp_ranks_agree_ubatch = true;
};

/** @brief Builds the plan of one step of `shape` (this rank's tokens, unpadded) on deployment `d`; InputError (naming
 *  the scenario file and key) for what the engine cannot run. */
StepPlan build_step_plan(const Deployment& d, const models::StepShape& shape, const CostSource& costs,
                         const PlanOptions& opt = {});

} // namespace dbosim::sim

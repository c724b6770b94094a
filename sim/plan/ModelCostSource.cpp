/* The models-backed cost source: kept apart so that code which only replays synthetic plans does not link models. */
#include "sim/plan/StepPlanBuilder.hpp"

#include "config/EngineTable.hpp"
#include "models/CostExplain.hpp"
#include "models/CostGuards.hpp"
#include "models/StepWork.hpp"

#include <memory>
#include <vector>

namespace dbosim::sim {

namespace {

/** One layer costing of the deployment: its arguments (and whether explanations were on) and its costs. */
struct LayerCall {
  models::StepShape shape;
  bool moe_layer;
  int comm_sms;
  bool explained;
  models::LayerCosts costs;
};

/** The deployment's last few layer costings: micro-batches of one shape (DBO's halves) are costed once. */
class LayerMemo {
public:
  template <class Cost>
  models::LayerCosts get(const models::StepShape& shape, bool moe_layer, int comm_sms, Cost&& cost)
  {
    const bool explained = models::cost_explanations();
    for (const LayerCall& c : calls_)
      if (c.shape == shape && c.moe_layer == moe_layer && c.comm_sms == comm_sms && c.explained == explained)
        return c.costs;
    models::LayerCosts costs = cost();
    if (calls_.size() == kept_calls)
      calls_.erase(calls_.begin());
    calls_.push_back({shape, moe_layer, comm_sms, explained, costs});
    return costs;
  }

private:
  static constexpr std::size_t kept_calls = 4; // a step's dense and MoE layers of two micro-batch shapes
  std::vector<LayerCall> calls_;
};

} // namespace

CostSource model_cost_source(const Deployment& d, MoeOpsMemos* moe_ops)
{
  // The deployment (and `moe_ops`) is captured by pointer: the CostSource must not outlive it.
  const Deployment* s = &d;
  auto memo           = std::make_shared<LayerMemo>();
  return CostSource{
      [s, memo, moe_ops](const models::StepShape& shape, bool moe, int comm_sms) {
        return memo->get(shape, moe, comm_sms, [&] {
          models::LayerCosts costs =
              moe && moe_ops && !models::cost_explanations()
                  ? models::layer_costs(s->model, s->hw, s->parallel, shape, comm_setup(*s, comm_sms),
                                        (*moe_ops)[comm_sms])
                  : models::layer_costs(s->model, s->hw, s->parallel, shape, moe, comm_setup(*s, comm_sms));
          models::check_layer_bounds(costs, s->hw); // no op faster than the peak, no D/C above the fastest link
          return costs;
        });
      },
      [s](const models::OpCost& op, int sms) {
        models::OpCost partitioned = op;
        partitioned.duration_us    = models::duration_on_sms_us(s->hw, op, sms);
        models::check_op_bounds(partitioned, s->hw);
        return partitioned.duration_us;
      },
      [s](const models::StepShape& shape) {
        models::OpCost mlp =
            models::routed_mlp_cost(s->model, s->hw, s->parallel, shape, s->cluster.routing.redundant_experts);
        models::check_op_bounds(mlp, s->hw);
        return mlp;
      },
      [s](const models::StepShape& shape) {
        models::OpCost work = models::step_work_cost(s->model, s->hw, s->parallel, shape);
        models::check_op_bounds(work, s->hw);
        return work;
      },
  };
}

models::CommSetup comm_setup(const Deployment& sc, int comm_sms)
{
  models::CommSetup c;
  c.net              = sc.parallel.ep > 1 || sc.parallel.tp > 1 ? &sc.network : nullptr;
  c.gpus_per_node    = sc.hw.nvlink_domain_size > 0 ? sc.hw.nvlink_domain_size : sc.cluster.gpus_per_node;
  c.comm_sms         = comm_sms;
  c.oversubscription = sc.cluster.oversubscription;
  c.routing          = sc.cluster.routing;
  c.routing.seed     = sc.seed;
  // One expert load for every verb (cluster.expert_load); the cluster path draws its own routing instead.
  c.expert_load         = expert_load_model(sc.cluster);
  c.moe_dp_chunk_tokens = sc.execution.moe_dp_chunk_tokens > 0 ? sc.execution.moe_dp_chunk_tokens
                                                               : engine_row(sc.engine).moe_dp_chunk_tokens;
  return c;
}

} // namespace dbosim::sim

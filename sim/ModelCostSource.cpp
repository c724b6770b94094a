/* The models-backed cost source: kept apart so that code which only replays synthetic plans does not link models. */
#include "sim/StepPlanBuilder.hpp"

namespace dbosim::sim {

CostSource model_cost_source(const Scenario& sc)
{
  // The scenario is captured by pointer: the CostSource must not outlive it.
  const Scenario* s = &sc;
  return CostSource{
      [s](const models::StepShape& shape, bool moe, int comm_sms) {
        return models::layer_costs(s->model, s->hw, s->parallel, shape, moe, comm_setup(*s, comm_sms));
      },
      [s](const models::OpCost& op, int sms) { return models::duration_on_sms_us(s->hw, op, sms); },
      [s](const models::StepShape& shape) {
        return models::routed_mlp_cost(s->model, s->hw, s->parallel, shape, s->cluster.routing.redundant_experts);
      },
  };
}

models::CommSetup comm_setup(const Scenario& sc, int comm_sms)
{
  models::CommSetup c;
  c.net              = sc.parallel.ep > 1 ? &sc.network : nullptr;
  c.gpus_per_node    = sc.hw.nvlink_domain_size > 0 ? sc.hw.nvlink_domain_size : sc.cluster.gpus_per_node;
  c.comm_sms         = comm_sms;
  c.oversubscription = sc.cluster.oversubscription;
  c.routing          = sc.cluster.routing;
  c.routing.seed     = sc.seed;
  return c;
}

} // namespace dbosim::sim

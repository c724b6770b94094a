/* The models-backed cost source: kept apart so that code which only replays synthetic plans does not link models. */
#include "sim/StepPlanBuilder.hpp"

#include "models/CostGuards.hpp"

namespace dbosim::sim {

CostSource model_cost_source(const Scenario& sc)
{
  // The scenario is captured by pointer: the CostSource must not outlive it.
  const Scenario* s = &sc;
  return CostSource{
      [s](const models::StepShape& shape, bool moe) {
        models::LayerCosts costs = models::layer_costs(s->model, s->hw, s->parallel, shape, moe);
        models::check_layer_bounds(costs, s->hw); // no op faster than the peak, no D/C above the fastest link
        return costs;
      },
      [s](const models::OpCost& op, int sms) {
        models::OpCost partitioned = op;
        partitioned.duration_us    = models::duration_on_sms_us(s->hw, op, sms);
        models::check_op_bounds(partitioned, s->hw);
        return partitioned.duration_us;
      },
  };
}

} // namespace dbosim::sim

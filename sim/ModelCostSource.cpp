/* The models-backed cost source: kept apart so that code which only replays synthetic plans does not link models. */
#include "sim/StepPlanBuilder.hpp"

namespace dbosim::sim {

CostSource model_cost_source(const Scenario& sc)
{
  // The scenario is captured by pointer: the CostSource must not outlive it.
  const Scenario* s = &sc;
  return CostSource{
      [s](const models::StepShape& shape, bool moe) {
        return models::layer_costs(s->model, s->hw, s->parallel, shape, moe);
      },
      [s](const models::OpCost& op, int sms) { return models::duration_on_sms_us(s->hw, op, sms); },
  };
}

} // namespace dbosim::sim

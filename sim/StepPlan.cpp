#include "sim/StepPlan.hpp"

namespace dbosim::sim {

const OpSpec* UbatchCosts::find(bool moe_layer, OpKind k) const
{
  for (const OpSpec& op : moe_layer ? moe : dense)
    if (op.kind == k)
      return &op;
  return nullptr;
}

} // namespace dbosim::sim

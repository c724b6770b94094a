/* dbosim — an op's duration when it is given part of the GPU's SMs (green context / SM budget). */
#include "models/OpCost.hpp"
#include "models/OpTables.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace dbosim::models {

double duration_on_sms_us(const HwProfile& hw, const OpCost& op, int sms, bool* linear_fallback)
{
  if (linear_fallback)
    *linear_fallback = false;
  // D and C: their SM share sets their bandwidth, which the all-to-all model (not this one) accounts for.
  if (op.sm_family.empty())
    return op.duration_us;
  if (hw.sm_count <= 0)
    throw std::invalid_argument(fmt::format("hardware profile '{}' has no sm_count", hw.name));
  if (sms < 1 || sms > hw.sm_count)
    throw std::invalid_argument(
        fmt::format("{} given {} SMs (valid: 1..{} on '{}')", op_name(op.kind), sms, hw.sm_count, hw.name));
  auto it = hw.sm_scaling.find(op.sm_family);
  if (it != hw.sm_scaling.end() && !it->second.speed.empty())
    return op.duration_us / speed_at_sms(it->second.speed, sms);
  if (linear_fallback)
    *linear_fallback = true;
  return op.duration_us * hw.sm_count / sms;
}

} // namespace dbosim::models

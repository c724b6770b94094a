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
  auto it            = hw.sm_scaling.find(op.sm_family);
  const Curve* curve = it != hw.sm_scaling.end() && !it->second.speed.empty() ? &it->second.speed : nullptr;
  bool linear        = false;
  auto by_family     = [&](double us) {
    if (curve)
      return us / speed_at_sms(*curve, sms);
    linear = true;
    return us * hw.sm_count / sms;
  };
  // kernels with a per-shape table at exactly these SMs take its speed; the rest scale by the family curve
  double total_us  = 0;
  double links_us  = 0; // collectives on the links (the TP all-reduce): their time is the fabric's, not the SMs'
  bool table_found = false;
  for (const auto& part : op.parts) {
    if (part.on_links) {
      links_us += part.us;
      total_us += part.us;
      continue;
    }
    const SmTable* t = part.table_family.empty() ? nullptr : find_sm_table(hw, part.table_family, part.table_dims, sms);
    table_found |= t != nullptr;
    total_us += t ? part.us / speed_at_tokens(t->speed_by_tokens, part.table_tokens) : by_family(part.us);
  }
  if (!table_found) {
    linear   = false;
    total_us = by_family(op.duration_us - links_us) + links_us; // the op's kernels by its family curve
  }
  if (linear_fallback)
    *linear_fallback = linear;
  return total_us;
}

} // namespace dbosim::models

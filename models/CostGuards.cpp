#include "models/CostGuards.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dbosim::models {
namespace {
[[noreturn]] void violation(const OpCost& op, const std::string& what)
{
  throw CostBoundViolation(
      fmt::format("op {} violates a physical bound: {} (method: {})", op_name(op.kind), what, op.method));
}

double highest_peak_flops(const HwProfile& hw)
{
  double peak = 0;
  for (const auto& [dtype, flops] : hw.peak_flops_per_s)
    peak = std::max(peak, flops);
  return peak;
}

/** The peak of `dtype` (BF16 attention against the BF16 peak, an FP8 GEMM against the FP8 one); the highest peak
 *  when the profile has none for it (a table-timed kernel needs no peak, and no faster unit exists). */
double dtype_peak_flops(const HwProfile& hw, DType dtype)
{
  auto it = hw.peak_flops_per_s.find(dtype);
  return it != hw.peak_flops_per_s.end() && it->second > 0 ? it->second : highest_peak_flops(hw);
}

/** A compute op with its kernels: each kernel no faster than its own dtype's peak, and the op no shorter than the
 *  sum of those floors. */
void check_kernel_peaks(const OpCost& op, const HwProfile& hw)
{
  double floor_us = 0;
  for (const auto& part : op.parts) {
    if (!(part.flops > 0))
      continue;
    const double peak   = dtype_peak_flops(hw, part.compute_dtype);
    const double min_us = part.flops / peak * 1e6;
    if (part.us < min_us * (1 - 1e-9))
      violation(op, fmt::format("kernel {}: {:.4g} flop in {:.4g} us is {:.4g} flop/s, exceeds the profile's peak for "
                                "{} ({:.4g} flop/s)",
                                part.name, part.flops, part.us,
                                part.us > 0 ? part.flops / (part.us * 1e-6) : std::numeric_limits<double>::infinity(),
                                dtype_name(part.compute_dtype), peak));
    floor_us += min_us;
  }
  if (op.duration_us < floor_us * (1 - 1e-9))
    violation(op, fmt::format("{:.4g} us is shorter than its kernels' FLOPs at their dtypes' peaks ({:.4g} us)",
                              op.duration_us, floor_us));
}
} // namespace

void check_op_bounds(const OpCost& op, const HwProfile& hw)
{
  for (auto [name, value] : {std::pair{"duration_us", op.duration_us}, std::pair{"flops", op.flops},
                             std::pair{"bytes", op.bytes}, std::pair{"weight_bytes", op.weight_bytes}})
    if (!std::isfinite(value) || value < 0)
      violation(op, fmt::format("{} = {} is not a finite non-negative number", name, value));
  if ((op.flops > 0 || op.bytes > 0) && op.duration_us <= 0)
    violation(op, "work with zero duration");
  if (op.duration_us <= 0)
    return;
  const double seconds = op.duration_us * 1e-6;
  const bool comm      = op.kind == OpKind::D || op.kind == OpKind::C;
  if (comm) {
    const double fastest_link = std::max(hw.nvlink_bytes_per_s, hw.nic_bytes_per_s);
    if (op.bytes / seconds > fastest_link * (1 + 1e-9))
      violation(op, fmt::format("{:.4g} B/s exceeds the fastest link ({:.4g} B/s)", op.bytes / seconds, fastest_link));
  } else if (!op.parts.empty()) {
    check_kernel_peaks(op, hw);
  } else {
    const double peak = highest_peak_flops(hw);
    if (op.flops / seconds > peak * (1 + 1e-9))
      violation(op, fmt::format("{:.4g} flop/s exceeds the profile's peak ({:.4g} flop/s)", op.flops / seconds, peak));
  }
}

void check_layer_bounds(const LayerCosts& layer, const HwProfile& hw)
{
  for (const auto& op : layer.ops)
    check_op_bounds(op, hw);
}

} // namespace dbosim::models

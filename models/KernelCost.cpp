#include "models/KernelCost.hpp"

#include "models/CostExplain.hpp"
#include "models/OpTables.hpp"
#include "models/PrefillAttention.hpp"

#include <fmt/format.h>

#include <optional>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace dbosim::models {
namespace {
constexpr double activation_out_bytes = 2.0; // GEMM outputs and streaming tensors are bf16

double peak_for(const HwProfile& hw, DType t)
{
  auto it = hw.peak_flops_per_s.find(t);
  if (it == hw.peak_flops_per_s.end() || !(it->second > 0))
    throw std::invalid_argument(
        fmt::format("hardware profile '{}' has no peak_tflops.{} (needed by the roofline)", hw.name, dtype_name(t)));
  return it->second;
}

double fraction(const HwProfile& hw, Efficiency e)
{
  double v         = 0;
  const char* name = "";
  switch (e) {
  case Efficiency::gemm:
    v    = hw.gemm_efficiency;
    name = "efficiency.gemm";
    break;
  case Efficiency::attention:
    v    = hw.attention_efficiency;
    name = "efficiency.attention";
    break;
  case Efficiency::memory:
    v    = hw.memory_efficiency;
    name = "efficiency.memory";
    break;
  }
  if (!(v > 0 && v <= 1))
    throw std::invalid_argument(fmt::format("hardware profile '{}': {} = {} is not in (0, 1]", hw.name, name, v));
  return v;
}

std::string efficiency_name(Efficiency e)
{
  switch (e) {
  case Efficiency::gemm:
    return "gemm";
  case Efficiency::attention:
    return "attention";
  case Efficiency::memory:
    return "memory";
  }
  return "?";
}

} // namespace

namespace {
/** The roofline alone: max(flops / (peak[dtype] x efficiency), bytes / (hbm x memory efficiency)). */
KernelTime roofline_time(const HwProfile& hw, const KernelWork& k)
{
  KernelTime out;
  if (!(hw.hbm_bytes_per_s > 0))
    throw std::invalid_argument(fmt::format("hardware profile '{}' has no hbm_bandwidth", hw.name));
  const double mem_eff   = fraction(hw, Efficiency::memory);
  const double memory_us = k.bytes / (hw.hbm_bytes_per_s * mem_eff) * 1e6;
  if (k.efficiency == Efficiency::memory) {
    out.us    = memory_us;
    out.bound = Bound::memory;
    if (cost_explanations())
      out.method = fmt::format("roofline memory {:.4g} B / ({:.4g} B/s x {:g}) = {:.3f} us", k.bytes,
                               hw.hbm_bytes_per_s, mem_eff, memory_us);
    return out;
  }
  const double peak = peak_for(hw, k.compute_dtype);
  // An FP8 GEMM's own measured fraction of the FP8 peak where the profile has one (BF16's is larger).
  const bool fp8_gemm = k.efficiency == Efficiency::gemm && k.compute_dtype == DType::fp8 && hw.gemm_fp8_efficiency > 0;
  // Likewise FP4 GEMMs (a fraction fitted on published FP4 GEMM figures where the profile has one).
  const bool fp4_gemm = k.efficiency == Efficiency::gemm && k.compute_dtype == DType::fp4 && hw.gemm_fp4_efficiency > 0;
  const double eff = fp8_gemm ? hw.gemm_fp8_efficiency : fp4_gemm ? hw.gemm_fp4_efficiency : fraction(hw, k.efficiency);
  const std::string eff_name = fp8_gemm ? "gemm_fp8" : fp4_gemm ? "gemm_fp4" : efficiency_name(k.efficiency);
  const double compute_us    = k.flops / (peak * eff) * 1e6;
  out.us                     = std::max(compute_us, memory_us);
  out.bound                  = compute_us >= memory_us ? Bound::compute : Bound::memory;
  if (cost_explanations())
    out.method = fmt::format("roofline max(compute {:.4g} flop / ({:.4g} flop/s {} x {} eff {:g}) = {:.3f} us, "
                             "memory {:.4g} B / ({:.4g} B/s x {:g}) = {:.3f} us) -> {}",
                             k.flops, peak, dtype_name(k.compute_dtype), eff_name, eff, compute_us, k.bytes,
                             hw.hbm_bytes_per_s, mem_eff, memory_us, bound_name(out.bound));
  return out;
}

/** A table whose axis is a causal self-attention length (prefill attention over a context): the table at the
 *  equal-pairs length, never below the roofline. */
KernelTime causal_table_time(const HwProfile& hw, const KernelWork& k, const OpTable& t)
{
  TableLookup how        = TableLookup::exact;
  const double table_us  = causal_table_us(t.us_by_tokens, k.table_tokens, &how);
  const KernelTime floor = roofline_time(hw, k);
  KernelTime out;
  out.us    = std::max(table_us, floor.us);
  out.bound = table_us >= floor.us ? Bound::table : floor.bound;
  if (cost_explanations())
    out.method = fmt::format("{}: table {} at {:.0f} tokens (the causal self-attention of equal pairs, {:.4g}), {}: "
                             "{:.3f} us; floor {} -> {:.3f} us",
                             k.name, table_key(k.table_family, k.table_dims), k.table_tokens,
                             self_attention_pairs(k.table_tokens),
                             how == TableLookup::extrapolated   ? "pair rate of last point"
                             : how == TableLookup::interpolated ? "linear in pairs between points"
                                                                : table_lookup_name(how),
                             table_us, floor.method, out.us);
  return out;
}
/** With no table at the kernel's exact dims: the two tables around its value of `table_interp_dim` (every other dim
 *  equal), each looked up at table_tokens, linearly between them in that dim. Outside the tables' range by at most the
 *  spacing of the two nearest tables, the line through those two, never below zero (checked on measured tables:
 *  docs/model.md); farther out, nothing. */
std::optional<KernelTime> between_tables(const HwProfile& hw, const KernelWork& k)
{
  const std::string& dim = k.table_interp_dim;
  const auto at          = k.table_dims.find(dim);
  if (at == k.table_dims.end())
    return std::nullopt;
  const int v = at->second;
  // The two nearest tables at or below v (below[0] the nearest) and the two at or above it.
  struct Near {
    const OpTable* table = nullptr;
    int x                = 0; // its value of `dim`
    double us            = 0; // its time at table_tokens, once the line's two are chosen
    TableLookup how      = TableLookup::exact;
  };
  std::array<Near, 2> below{}, above{};
  auto keep = [v](std::array<Near, 2>& side, const OpTable& t, int x) {
    const int d = std::abs(x - v);
    if (!side[0].table || d < std::abs(side[0].x - v)) {
      side[1] = side[0];
      side[0] = {&t, x};
    } else if (!side[1].table || d < std::abs(side[1].x - v)) {
      side[1] = {&t, x};
    }
  };
  for_each_table_of(hw, k.table_family, [&](const OpTable& t) {
    // the same dim names (both maps in name order), the same values but in `dim`
    if (t.dims.size() != k.table_dims.size())
      return false;
    int x = 0;
    for (auto a = t.dims.begin(), b = k.table_dims.begin(); a != t.dims.end(); ++a, ++b) {
      if (a->first != b->first)
        return false;
      if (b == at)
        x = a->second;
      else if (a->second != b->second)
        return false;
    }
    if (x <= v)
      keep(below, t, x);
    if (x >= v)
      keep(above, t, x);
    return false;
  });
  // The pair the line goes through: around v, else the two nearest on the one side within one spacing of v.
  Near a, b;
  bool extrapolated = false;
  if (below[0].table && above[0].table) {
    a = below[0];
    b = above[0];
  } else {
    const std::array<Near, 2>& side = below[0].table ? below : above;
    if (!side[0].table || !side[1].table || std::abs(v - side[0].x) > std::abs(side[0].x - side[1].x))
      return std::nullopt;
    a            = side[1];
    b            = side[0];
    extrapolated = true;
  }
  a.us           = table_us(a.table->us_by_tokens, k.table_tokens, &a.how);
  b.us           = table_us(b.table->us_by_tokens, k.table_tokens, &b.how);
  const double w = b.x != a.x ? double(v - a.x) / double(b.x - a.x) : 0.0;
  KernelTime out;
  out.us    = std::max(0.0, a.us + w * (b.us - a.us)) * k.table_scale;
  out.bound = Bound::table;
  out.table = k.table_family;
  if (cost_explanations()) {
    const Near &lo = a.x < b.x ? a : b, &hi = a.x < b.x ? b : a; // in the dim's order, whichever side the line is from
    out.method = fmt::format("{}: tables {} and {} at {:g} tokens ({}: {:.3f} us, {}: {:.3f} us), linear in {} {} {} "
                             "and {} {} {}: {:.3f} us",
                             k.name, table_key(k.table_family, lo.table->dims),
                             table_key(k.table_family, hi.table->dims), k.table_tokens, table_lookup_name(lo.how),
                             lo.us, table_lookup_name(hi.how), hi.us, dim, extrapolated ? "through" : "between", lo.x,
                             hi.x, extrapolated ? "extrapolated to" : "at", v, out.us);
  }
  return out;
}

/** The kernel's time from its table (the preferred family first) or the roofline, before its floor. */
KernelTime unfloored_time(const HwProfile& hw, const KernelWork& k)
{
  for (const std::string* family : {&k.table_prefer, &k.table_family}) {
    if (family->empty())
      continue;
    if (const OpTable* t = find_table(hw, *family, k.table_dims)) {
      if (k.table_axis == TableAxis::causal_tokens) {
        KernelTime out = causal_table_time(hw, k, *t);
        out.table      = *family;
        return out;
      }
      KernelTime out;
      TableLookup how = TableLookup::exact;
      double us       = table_us(t->us_by_tokens, k.table_tokens, &how);
      if (how == TableLookup::extrapolated && t->roofline_past_last) // past a published table's last point
        us = std::max(t->us_by_tokens.y.back(), roofline_time(hw, k).us);
      out.us    = us * k.table_scale;
      out.bound = Bound::table;
      out.table = *family;
      if (cost_explanations())
        out.method = fmt::format("{}: table {} at {:g} tokens, {}: {:.3f} us", k.name, table_key(*family, k.table_dims),
                                 k.table_tokens,
                                 how == TableLookup::extrapolated && t->roofline_past_last
                                     ? "past its last point, the larger of that point and the roofline"
                                     : table_lookup_name(how),
                                 us);
      if (k.table_scale != 1 && cost_explanations())
        out.method += fmt::format(" x {:.4g} (active share of the table's experts) = {:.3f} us", k.table_scale, out.us);
      return out;
    }
  }
  if (!k.table_interp_dim.empty() && !k.table_family.empty())
    if (auto between = between_tables(hw, k))
      return *between;
  KernelTime out = roofline_time(hw, k);
  if (cost_explanations())
    out.method = k.name + ": " + out.method;
  return out;
}
} // namespace

KernelTime kernel_time(const HwProfile& hw, const KernelWork& k)
{
  if (k.fabric_us >= 0) {
    KernelTime link;
    link.us    = k.fabric_us;
    link.bound = Bound::network;
    if (cost_explanations())
      link.method = fmt::format("{}: {:.3f} us on the links ({})", k.name, k.fabric_us, k.shape);
    return link;
  }
  if (k.flops <= 0 && k.bytes <= 0) {
    KernelTime none;
    if (cost_explanations())
      none.method = fmt::format("{}: no work", k.name);
    return none;
  }
  KernelTime out = unfloored_time(hw, k);
  if (k.floor_family.empty())
    return out;
  auto floor = hw.kernel_floor_us.find(k.floor_family);
  if (floor != hw.kernel_floor_us.end() && out.us < floor->second) {
    if (cost_explanations())
      out.method += fmt::format(" -> floor {} {:.3f} us", k.floor_family, floor->second);
    out.us      = floor->second;
    out.floored = true;
  }
  return out;
}

KernelWork gemm_kernel(const std::string& name, double m, int n, int k, DType weight_dtype)
{
  return gemm_kernel(name, m, n, k, dtype_format(weight_dtype));
}

KernelWork gemm_kernel(const std::string& name, double m, int n, int k, const LinearFormat& f)
{
  KernelWork w;
  w.name          = name;
  w.compute_dtype = f.compute;
  w.efficiency    = Efficiency::gemm;
  w.table_family  = "gemm_" + f.table;
  w.table_dims    = {{"n", n}, {"k", k}};
  w.table_tokens  = m;
  w.floor_family  = f.floor;
  w.table_prefer  = f.table_prefer;
  if (cost_explanations())
    w.shape = fmt::format("M={:g} N={} K={} {}", m, n, k, f.name);
  if (m <= 0)
    return w;
  w.flops        = 2.0 * m * n * k;
  w.weight_bytes = double(n) * k * f.weight_bytes;
  w.bytes        = w.weight_bytes + m * k * f.activation_bytes + m * n * activation_out_bytes;
  return w;
}

KernelWork grouped_gemm_kernel(const std::string& name, double rows, double active_experts, int local_experts, int n,
                               int k, DType weight_dtype)
{
  return grouped_gemm_kernel(name, rows, active_experts, local_experts, n, k, dtype_format(weight_dtype));
}

KernelWork grouped_gemm_kernel(const std::string& name, double rows, double active_experts, int local_experts, int n,
                               int k, const LinearFormat& f)
{
  KernelWork w;
  w.name          = name;
  w.compute_dtype = f.compute;
  w.efficiency    = Efficiency::gemm;
  w.table_family  = "grouped_gemm_" + f.table;
  w.table_dims    = {{"experts", local_experts}, {"n", n}, {"k", k}};
  // An expert count between two measured tables (9 slots a rank at EP32 with 288 slots, 18 at EP16) takes the two
  // tables around it, linearly in experts, rather than the roofline; one within a spacing past them (36 at EP8), the
  // line through the nearest two (between_tables).
  w.table_interp_dim = "experts";
  w.floor_family     = "grouped_gemm";
  if (cost_explanations())
    w.shape = fmt::format("{:.4g} rows over {:.4g} of {} experts, N={} K={} {}", rows, active_experts, local_experts, n,
                          k, f.name);
  // The table loads every local expert with the same tokens; the kernel skips experts without tokens (DeepGEMM's
  // masked layout, CUTLASS grouped GEMMs), so it runs table(tokens per active expert) on the active share.
  const double active = std::clamp(active_experts, 0.0, double(local_experts));
  w.table_tokens      = active > 0 ? rows / active : 0;
  w.table_scale       = local_experts > 0 && active > 0 ? active / local_experts : 1;
  if (rows <= 0)
    return w;
  w.flops        = 2.0 * rows * n * k;
  w.weight_bytes = active_experts * n * k * f.weight_bytes;
  w.bytes        = w.weight_bytes + rows * k * f.activation_bytes + rows * n * activation_out_bytes;
  return w;
}

KernelWork head_bmm_kernel(const std::string& name, double rows, int heads, int n, int k, DType weight_dtype)
{
  KernelWork w;
  w.name          = name;
  w.compute_dtype = weight_dtype;
  w.efficiency    = Efficiency::gemm;
  w.floor_family  = "gemm";
  // Measured as vLLM launches it (kernels/torch_mla_bmm.py: torch.bmm of the heads-first view); a head count between
  // two measured ones (32 at TP4) takes the two tables around it, linearly in heads.
  w.table_family     = std::string("head_bmm_") + dtype_name(weight_dtype);
  w.table_dims       = {{"heads", heads}, {"n", n}, {"k", k}};
  w.table_tokens     = rows;
  w.table_interp_dim = "heads";
  if (cost_explanations())
    w.shape = fmt::format("{:g} rows x {} heads, N={} K={} {}", rows, heads, n, k, dtype_name(weight_dtype));
  if (rows <= 0)
    return w;
  w.flops        = 2.0 * rows * heads * n * k;
  w.weight_bytes = double(heads) * n * k * dtype_bytes(weight_dtype);
  w.bytes        = w.weight_bytes + rows * heads * (k + n) * activation_out_bytes;
  return w;
}

KernelWork streaming_kernel(const std::string& name, double rows, int width, double reads, double writes,
                            const std::string& family)
{
  KernelWork w;
  w.name         = name;
  w.efficiency   = Efficiency::memory;
  w.table_family = family;
  w.table_dims   = {{"hidden", width}};
  w.table_tokens = rows;
  w.floor_family = family.empty() ? "elementwise" : family;
  if (cost_explanations())
    w.shape = fmt::format("{:g} x {}", rows, width);
  if (rows <= 0)
    return w;
  w.bytes = rows * width * (reads + writes) * activation_out_bytes; // FLOPs not counted: element-wise, memory-bound
  return w;
}

KernelWork activation_quant_kernel(const std::string& name, double rows, int width)
{
  KernelWork w   = streaming_kernel(name, rows, width, 1, 0, "");
  w.floor_family = "quant";
  if (rows > 0)
    w.bytes += rows * width * 1.0 + rows * (width / 128.0) * 4.0; // FP8 out + one fp32 scale per group of 128
  return w;
}

void add_linear(std::vector<KernelWork>& out, const std::string& name, double m, int n, int k, DType weight_dtype,
                std::string_view source)
{
  add_linear(out, name, m, n, k, dtype_format(weight_dtype), source);
}

void add_linear(std::vector<KernelWork>& out, const std::string& name, double m, int n, int k, const LinearFormat& f,
                std::string_view source)
{
  if (f.quantize_input) {
    KernelWork q = activation_quant_kernel(name + "_input_quant", m, k);
    if (f.quant_out_bytes > 0 && m > 0) // the format's values and scales out instead of vLLM's FP8 ones
      q.bytes = streaming_kernel(q.name, m, k, 1, 0, "").bytes + m * k * f.quant_out_bytes;
    out.push_back(launched_at(q, !cost_explanations() ? std::string()
                                 : f.quant_out_bytes > 0
                                     ? fmt::format("the {} activation quantization (before {})", f.name, name)
                                     : "vllm/model_executor/layers/quantization/utils/fp8_utils.py: "
                                       "per_token_group_quant_fp8 (before " +
                                           name + ")"));
  }
  out.push_back(launched_at(gemm_kernel(name, m, n, k, f), source));
}

std::string source_note(std::string_view base, std::string_view note)
{
  if (!cost_explanations())
    return {};
  std::string out(base);
  out += note;
  return out;
}

KernelWork launched_at(KernelWork w, std::string_view source, std::string_view floor_family)
{
  if (cost_explanations())
    w.source = source;
  if (!floor_family.empty())
    w.floor_family = floor_family;
  return w;
}

KernelWork inside(KernelWork w, GraphSplit split)
{
  w.split = split;
  return w;
}

} // namespace dbosim::models

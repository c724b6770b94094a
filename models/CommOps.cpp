#include "models/CommOps.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace dbosim::models {
namespace {
constexpr int scale_group_elements = 128; // DeepEP FP8: one fp32 scale per 128 hidden elements
constexpr double scale_bytes       = 4.0;

/** Kernel launches: DeepEP high-throughput dispatch = layout/notify + dispatch; low-latency = send + receive
 *  hook (the receive half runs later on the other micro-batch); NCCL = one collective. */
int launches(OpKind kind, All2AllBackend b)
{
  switch (b) {
  case All2AllBackend::nccl:
    return 1;
  case All2AllBackend::deepep_low_latency:
    return 2;
  case All2AllBackend::deepep_high_throughput:
  case All2AllBackend::deepep_v2:
    return kind == OpKind::D ? 2 : 1;
  }
  return 1;
}
} // namespace

double dispatch_bytes_per_copy(const ModelSpec& m)
{
  double b = double(m.hidden) * dtype_bytes(m.dispatch_dtype);
  if (dtype_bytes(m.dispatch_dtype) <= 1.0)
    b += double(m.hidden) / scale_group_elements * scale_bytes;
  return b;
}

double combine_bytes_per_copy(const ModelSpec& m) { return double(m.hidden) * dtype_bytes(m.combine_dtype); }

double copies_leaving_rank(const ModelSpec& m, const ParallelSpec& par, const StepShape& s)
{
  if (par.ep <= 1)
    return 0;
  return double(s.tokens) * m.top_k * (par.ep - 1) / par.ep;
}

OpCost all_to_all_cost(OpKind kind, const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par,
                       const StepShape& s)
{
  if (kind != OpKind::D && kind != OpKind::C)
    throw std::invalid_argument("all_to_all_cost: kind must be D or C");
  const bool nvlink       = par.ep <= hw.nvlink_domain_size;
  const double bw         = nvlink ? hw.nvlink_bytes_per_s : hw.nic_bytes_per_s;
  const double latency_us = nvlink ? hw.nvlink_latency_us : hw.nic_latency_us;
  const char* link        = nvlink ? "NVLink" : "NIC";
  if (!(bw > 0))
    throw std::invalid_argument(fmt::format("hardware profile '{}' has no {} bandwidth (needed by {} at ep={})",
                                            hw.name, link, op_name(kind), par.ep));
  const double copies   = copies_leaving_rank(m, par, s);
  const double per_copy = kind == OpKind::D ? dispatch_bytes_per_copy(m) : combine_bytes_per_copy(m);
  OpCost c;
  c.kind        = kind;
  c.bytes       = copies * per_copy;
  c.duration_us = latency_us + c.bytes / bw * 1e6;
  c.bound       = Bound::network;
  c.kernels     = launches(kind, par.backend);
  c.method      = fmt::format("{} {}: {:g} copies (tokens {} x top_k {} x (ep-1)/ep, ep={}) x {:g} B = {:.4g} B over "
                                   "{} {:.4g} B/s + latency {:g} us = {:.3f} us",
                              op_name(kind), backend_name(par.backend), copies, s.tokens, m.top_k, par.ep, per_copy, c.bytes,
                              link, bw, latency_us, c.duration_us);
  return c;
}

} // namespace dbosim::models

#include "models/CommOps.hpp"

#include "models/All2AllModel.hpp"
#include "models/BalancedRouting.hpp"
#include "models/CostExplain.hpp"
#include "models/Precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace dbosim::models {
namespace {
constexpr int scale_group_elements = 128; // DeepEP FP8: one fp32 scale per 128 hidden elements
constexpr double scale_bytes       = 4.0;

/** The kernels a backend launches for D or C (models/All2AllTable.hpp): DeepEP high-throughput dispatch =
 *  layout/notify + dispatch; low-latency = send + receive hook (the receive half runs later on the other
 *  micro-batch); NCCL = one collective. */
const All2AllLaunches& launches(OpKind kind, All2AllBackend b)
{
  return kind == OpKind::D ? all2all_traits_of(b).dispatch : all2all_traits_of(b).combine;
}

/** The kernels a backend launches for D or C, and where (for --explain). */
std::string kernels_launched(OpKind kind, All2AllBackend b)
{
  const All2AllLaunches& l = launches(kind, b);
  return fmt::format("{} ({})", l.what, l.source);
}
} // namespace

double dispatch_bytes_per_copy(const ModelSpec& m)
{
  if (m.dispatch_dtype == DType::fp4) // NVFP4 dispatch: one E4M3 scale per 16 values
    return double(m.hidden) * payload_bytes_per_element(m.dispatch_dtype);
  double b = double(m.hidden) * dtype_bytes(m.dispatch_dtype);
  if (dtype_bytes(m.dispatch_dtype) <= 1.0)
    b += double(m.hidden) / scale_group_elements * scale_bytes;
  return b;
}

double combine_bytes_per_copy(const ModelSpec& m)
{
  if (m.combine_dtype == DType::fp4)
    return double(m.hidden) * payload_bytes_per_element(m.combine_dtype);
  return double(m.hidden) * dtype_bytes(m.combine_dtype);
}

KernelWork tp_all_reduce_kernel(const std::string& name, double tokens, const ModelSpec& m, const HwProfile& hw,
                                const ParallelSpec& par, const CommSetup& comm, const std::string& source)
{
  if (par.tp <= 1)
    throw std::invalid_argument(fmt::format("{}: a tensor-parallel all-reduce needs tp > 1 (tp={})", name, par.tp));
  if (!comm.net)
    throw std::invalid_argument(fmt::format("{} at tp={} needs network facts for profile '{}' "
                                            "(hwprofiles/network/<name>.yaml)",
                                            name, par.tp, hw.name));
  constexpr double reduced_bytes_per_element = 2.0; // the layer's BF16 output
  const NetworkFacts& n                      = *comm.net;
  const bool through_nics                    = par.tp > comm.gpus_per_node;
  const double hop_us =
      through_nics ? std::max(hw.nvlink_latency_us, hw.nic_latency_us + n.switch_latency_us) : hw.nvlink_latency_us;
  const double link_bytes_s = through_nics ? std::min(n.nvlink_achievable_bytes_per_s, n.nic_achievable_bytes_per_s)
                                           : n.nvlink_achievable_bytes_per_s;
  const double buffer_bytes = std::max(0.0, tokens) * m.hidden * reduced_bytes_per_element;
  const double ring_steps   = 2.0 * (par.tp - 1);
  const double sent_bytes   = ring_steps / par.tp * buffer_bytes;
  KernelWork w;
  w.name      = name;
  w.source    = source;
  w.fabric_us = buffer_bytes > 0 ? ring_steps * hop_us + sent_bytes / link_bytes_s * 1e6 : 0.0;
  w.shape     = fmt::format("{:g} x {} bf16 over tp {}, a ring through {}", tokens, m.hidden, par.tp,
                        through_nics ? "the NICs" : "the node's links");
  return w;
}

OpCost all_to_all_cost(OpKind kind, const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par,
                       const StepShape& s, const CommSetup& comm)
{
  if (kind != OpKind::D && kind != OpKind::C)
    throw std::invalid_argument("all_to_all_cost: kind must be D or C");
  if (!comm.net)
    throw std::invalid_argument(fmt::format("{} at ep={} needs network facts for profile '{}' "
                                            "(hwprofiles/network/<name>.yaml)",
                                            op_name(kind), par.ep, hw.name));
  RoutingSpec spec = comm.routing;
  spec.dist        = RoutingDist::balanced;
  const std::shared_ptr<const ExpertPlacement> pl =
      balanced_placement(spec.placement, spec.redundant_experts, m.num_routed_experts, par.ep);
  // One row for every source rank (models/BalancedRouting): O(ep) memory where ep equal rows were O(ep^2).
  const RoutingRows rm = routing_rows(
      route_balanced_rows(spec, *pl, m.num_routed_experts, m.top_k, par.ep, comm.gpus_per_node, std::max(0, s.tokens)));
  const All2AllContext ctx{&m, &hw, comm.net, comm.gpus_per_node, comm.comm_sms, comm.oversubscription};
  const std::vector<RankComm> ranks = all2all_per_rank(par.backend, kind, rm, ctx);
  // The collective ends when its slowest rank does (balanced routing over EPLB slots can leave ranks unequal).
  const RankComm& w = *std::max_element(
      ranks.begin(), ranks.end(), [](const RankComm& a, const RankComm& b) { return a.duration_us < b.duration_us; });
  OpCost c;
  c.kind        = kind;
  c.bytes       = w.reported_bytes;
  c.duration_us = w.duration_us;
  c.recv_us     = w.recv_us;
  c.bound       = Bound::network;
  c.kernels     = launches(kind, par.backend).count;
  c.launch_split.assign(c.kernels, GraphSplit::moe); // DeepEP's prepare / finalize run inside FusedMoE's custom op
  if (cost_explanations())
    c.method =
        fmt::format("kernels: {}; ", kernels_launched(kind, par.backend)) +
        fmt::format("{} {} (models/All2AllModel, network facts '{}'): {} tokens/rank, balanced routing over ep={} "
                    "({} GPUs per node); slowest rank: NVLink {:.4g} B, RDMA {:.4g} B, bound by {} = {:.3f} us",
                    op_name(kind), backend_name(par.backend), comm.net->name, s.tokens, par.ep, comm.gpus_per_node,
                    w.nvlink_bytes, w.rdma_bytes, bottleneck_name(w.bottleneck), c.duration_us) +
        (comm.routing.hot_rank_load != 1.0
             ? fmt::format("; the busiest rank receives {:.3f}x the mean copies (post-EPLB residual)",
                           comm.routing.hot_rank_load)
             : std::string());
  return c;
}

} // namespace dbosim::models

/* dbosim — dispatch/combine all-to-all models chosen by name (DeepEP low-latency, DeepEP high-throughput, DeepEP v2,
 * MoRI-EP, NCCL): per-rank completion times from per-rank-pair traffic (models::RoutingRows) and link facts
 * (models::HwProfile + models::NetworkFacts). Pure functions. The collective ends when its slowest rank does: the
 * engine (sim/engine/ClusterEngine) couples the ranks, these give each rank's own duration. */
#pragma once
#include "hw/HwProfile.hpp"
#include "hw/NetworkFacts.hpp"
#include "models/ExpertRouting.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

#include <string>
#include <vector>

namespace dbosim::models {

/** @brief What an all-to-all model needs besides the traffic. */
struct All2AllContext {
  const ModelSpec* model  = nullptr;
  const HwProfile* hw     = nullptr;
  const NetworkFacts* net = nullptr;
  int gpus_per_node       = 8; ///< ranks sharing one NVLink domain
  int comm_sms            = 0; ///< SMs an SM-resident kernel holds (0: the whole GPU's copy engines, no SM bound)
  double oversubscription = 1; ///< fat-tree leaf down/up ratio: traffic through the spine gets nic / ratio per NIC
};

/** @brief What bounds one rank's collective: its NVLink (or xGMI) bytes, its NIC's RDMA bytes, or neither (the fixed
 *  latency of a collective with no RDMA traffic). */
enum class CommBottleneck { nvlink, rdma, latency };
/** @brief "nvlink", "rdma" or "latency": how the cost notes and tables print it. */
constexpr const char* bottleneck_name(CommBottleneck b)
{
  return b == CommBottleneck::nvlink ? "nvlink" : (b == CommBottleneck::rdma ? "rdma" : "latency");
}

/** @brief One rank's side of one collective. */
struct RankComm {
  double duration_us    = 0; ///< alone on the fabric, from kernel start to this rank's last byte in and out
  double nvlink_bytes   = 0; ///< max(sent, received) over NVLink
  double rdma_bytes     = 0; ///< max(sent, received) over its NIC
  double reported_bytes = 0; ///< the bytes DeepEP's own benchmark divides by the time (its "bandwidth" figure)
  /** The receive kernel's part of duration_us: DeepEP low-latency's recv phase (wait, then the HBM pass that unpacks
   *  dispatch or reduces combine), which return_recv_hook runs as a kernel of its own; the rest (send phase, wire,
   *  fences) is in flight with no SMs held. 0 for the backends whose kernel holds its SMs throughout. */
  double recv_us            = 0;
  CommBottleneck bottleneck = CommBottleneck::nvlink; ///< what bounds duration_us
};

using All2AllFn = std::vector<RankComm> (*)(OpKind kind, const RoutingRows& rm, const All2AllContext& ctx);

/** @brief A registry entry: {name, one-line doc, model}, one per row of models/All2AllTable.hpp (whose traits
 *  all2all_traits_of gives). */
struct All2AllEntry {
  const char* name;
  const char* doc;
  All2AllBackend backend;
  All2AllFn fn;
};

const std::vector<All2AllEntry>& all2all_registry();
/** @brief The entry of `backend` (every backend has one). */
const All2AllEntry& all2all_model(All2AllBackend backend);

/** @brief Per-rank D or C (kind must be OpKind::D or OpKind::C) by the backend's model, in O(ep + entries) for
 *  sparse rows. @throws std::invalid_argument on a bad kind or missing link facts. */
std::vector<RankComm> all2all_per_rank(All2AllBackend backend, OpKind kind, const RoutingRows& rm,
                                       const All2AllContext& ctx);
/** @brief The same from a dense matrix (converted to sparse rows). */
std::vector<RankComm> all2all_per_rank(All2AllBackend backend, OpKind kind, const RoutingMatrix& rm,
                                       const All2AllContext& ctx);

/** @brief The slowest rank's duration (the collective's). */
double all2all_completion_us(const std::vector<RankComm>& ranks);

} // namespace dbosim::models

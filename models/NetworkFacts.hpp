/* dbosim — the scale-out and NVLink facts the cluster models need beyond models::HwProfile, each with its source.
 * Filled by config/NetworkFactsLoader from hwprofiles/network/<profile>.yaml. */
#pragma once
#include <map>
#include <string>

namespace dbosim::models {

struct NetworkFacts {
  std::string name;
  /** Bandwidth an SM-driven copy kernel reaches over NVLink, per GPU per direction (below the raw link rate). */
  double nvlink_achievable_bytes_per_s = 0;
  /** Bandwidth one RDMA NIC delivers as payload, per direction (line rate less IB framing). */
  double nic_achievable_bytes_per_s = 0;
  /** Per-message cost expressed in bytes: a message of m bytes moves at bw · m / (m + overhead). */
  double nvlink_message_overhead_bytes = 0;
  double nic_message_overhead_bytes    = 0;
  double switch_latency_us             = 0; ///< one fat-tree switch traversal
  int leaf_switch_down_ports           = 0; ///< GPUs (rails) under one leaf switch of the rail-optimised fat tree
  int ht_nvl_chunk_tokens              = 0; ///< DeepEP high-throughput: tokens per NVLink chunk
  int ht_rdma_chunk_tokens             = 0; ///< DeepEP high-throughput: tokens per RDMA chunk
  int nccl_channels                    = 0; ///< NCCL: concurrent channels (per-peer messages in flight)
  std::map<std::string, std::string> sources;

  /** @brief Fraction of the link's bandwidth a message of `bytes` reaches. */
  static double efficiency(double bytes, double overhead_bytes)
  {
    return bytes > 0 ? bytes / (bytes + overhead_bytes) : 1.0;
  }
};

} // namespace dbosim::models

/* dbosim — the scale-out and NVLink facts the cluster models need beyond models::HwProfile, each with its source.
 * Filled by config/NetworkFactsLoader from hwprofiles/network/<profile>.yaml. */
#pragma once
#include "hw/ScaleUpTopology.hpp"

#include <map>
#include <string>
#include <vector>

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
  /** DeepEP's kernels (low-latency, normal, v2): what one dispatch or combine costs whatever its payload — the
   *  launch, the grid-wide sync between the send and receive phases, the per-expert count exchange with every rank
   *  and the clean of the next buffer — added to the data's time on the links. */
  double deepep_call_fixed_us = 0;
  /** DeepEP low-latency with a receive hook (return_recv_hook, under DBO/TBO): the part of `deepep_call_fixed_us`
   *  that the receive kernel spends on the compute stream whatever its payload (polling every rank's per-expert
   *  count, the grid sync, the scale layout), by kind; the rest stays with the send kernel and the flight. Each is at
   *  most `deepep_call_fixed_us`. */
  double deepep_ll_dispatch_recv_fixed_us = 0;
  double deepep_ll_combine_recv_fixed_us  = 0;
  /** DeepEP high-throughput across nodes: the share of its link stages' modelled rate (the larger of the NVLink
   *  forwarding and the RDMA stage) that the internode kernels reach, in [0.1, 1]: their SMs split between RDMA
   *  senders, NVLink forwarders and receivers, where the intranode kernels spend every warp on NVLink. */
  double deepep_ht_internode_efficiency = 1;
  int leaf_switch_down_ports            = 0; ///< GPUs (rails) under one leaf switch of the rail-optimised fat tree
  /** DeepEP high-throughput: tokens per chunk (one message and one tail-flag update) by EP size, as DeepEP's
   *  recommended configs set them; rows ascending in `ep`. */
  struct HtChunks {
    std::vector<int> ep;
    std::vector<int> dispatch_nvl, dispatch_rdma, combine_nvl, combine_rdma;
  } ht_chunks;
  /** MoRI-EP (ROCm/mori) kernel facts (`mori:` in the file; absent: the mori backend cannot run on this fabric). */
  struct Mori {
    bool present = false;
    /** What one dispatch or combine costs whatever its payload (the launch, the per-peer slot reservation and
     *  completion signals, the cross-device barrier), added to the data's time on the links. */
    double call_fixed_us = 0;
    /** The dispatch kernel's share of the link rate the combine kernel reaches at large token counts (its extra
     *  routing pass and serialized completion waits), in (0, 1]. */
    double dispatch_efficiency = 1;
  } mori;
  /** Scale-up fabric of one domain (`scale_up:` in the file; absent = switch). On a full mesh each peer pair has its
   *  own link: `nvlink_achievable_bytes_per_s` is then the GPU's sum over its links, and one pair's traffic moves at
   *  one link's achievable rate. */
  ScaleUpTopology scale_up_topology       = ScaleUpTopology::switched;
  int mesh_links_per_gpu                  = 0; ///< full mesh: point-to-point links per GPU (peers it reaches directly)
  double mesh_link_bytes_per_s            = 0; ///< full mesh: one link's raw rate, per direction
  double mesh_link_achievable_bytes_per_s = 0; ///< full mesh: what a copy kernel reaches on one link, per direction
  std::map<std::string, std::string> sources;

  /** @brief Tokens per DeepEP high-throughput chunk for `ep` ranks (the row of the largest listed EP <= ep, the first
   *  row below it): dispatch or combine, NVLink or RDMA; 1 when the table is empty. */
  int ht_chunk_tokens(int ep, bool dispatch, bool nvlink) const
  {
    if (ht_chunks.ep.empty())
      return 1;
    std::size_t i = 0;
    while (i + 1 < ht_chunks.ep.size() && ht_chunks.ep[i + 1] <= ep)
      ++i;
    const std::vector<int>& col = dispatch ? (nvlink ? ht_chunks.dispatch_nvl : ht_chunks.dispatch_rdma)
                                           : (nvlink ? ht_chunks.combine_nvl : ht_chunks.combine_rdma);
    return col[i];
  }

  /** @brief Fraction of the link's bandwidth a message of `bytes` reaches. */
  static double efficiency(double bytes, double overhead_bytes)
  {
    return bytes > 0 ? bytes / (bytes + overhead_bytes) : 1.0;
  }
};

} // namespace dbosim::models

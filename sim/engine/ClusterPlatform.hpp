/* dbosim — the cluster's network as a SimGrid platform built in code: per node the scale-up fabric the network facts
 * name (models::ScaleUpTopology: an NVSwitch, each GPU's NVLink port up and down; or a full mesh, one xGMI link per
 * ordered GPU pair), one NIC per GPU on a rail-optimised two-tier fat tree (a leaf switch per rail and group of nodes,
 * leaf up-links oversubscribed by the configured ratio, a non-blocking spine). Link efficiency is a SimGrid bandwidth
 * factor callback fed by models::NetworkFacts (achievable fraction x message-size efficiency), never a change of the
 * expected results. And an all-to-all executor: one flow per rank pair (validation), or aggregated flows. */
#pragma once
#include "hw/HwProfile.hpp"
#include "hw/NetworkFacts.hpp"

#include <string>
#include <vector>

namespace simgrid::s4u {
class Host;
class Link;
} // namespace simgrid::s4u

namespace dbosim::sim {

struct PlatformSpec {
  int nodes                       = 1;
  int gpus_per_node               = 8;
  double oversubscription         = 1.0;
  const models::HwProfile* hw     = nullptr;
  const models::NetworkFacts* net = nullptr;
};

/** @brief The built platform; only valid inside the simulation that built it. */
struct ClusterPlatform {
  std::vector<simgrid::s4u::Host*> gpus;
  int gpus_per_node    = 8;
  double message_bytes = 0; ///< size the bandwidth factor uses for the flows now in flight (one token copy or chunk)
};

/** @brief Builds the zone under the engine's root. Call once, after the sg4::Engine exists and before run(). */
ClusterPlatform& build_cluster_platform(const PlatformSpec& spec);

enum class A2aExec {
  per_flow,  ///< one flow per (src, dst) rank pair: exact on the platform, quadratic — small EP only
  aggregated ///< intra-node: one flow per pair; inter-node: one flow per (src, dst node) to the src's rail GPU there
};

/** @brief Runs one all-to-all of `bytes[src][dst]` from the calling actor; returns, per rank, the time (µs from the
 *  call) its last byte in or out arrived. `message_bytes`: the kernel's message size (the factor's input). */
std::vector<double> run_all_to_all(ClusterPlatform& p, const std::vector<std::vector<double>>& bytes, A2aExec mode,
                                   double message_bytes);

} // namespace dbosim::sim

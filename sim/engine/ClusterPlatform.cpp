#include "sim/engine/ClusterPlatform.hpp"

#include "base/InputError.hpp"

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <unordered_set>

namespace sg4 = simgrid::s4u;

namespace dbosim::sim {
namespace {

/** @brief Lives for the process (one simulation per process): the factor callback reads it. */
struct PlatformState {
  ClusterPlatform platform;
  std::unordered_set<const sg4::Link*> nic_links;
  std::unordered_set<const sg4::Link*> mesh_links; ///< full mesh: the point-to-point links between peers
  const models::NetworkFacts* net = nullptr;
  double nvlink_raw               = 0;
  double nic_raw                  = 0;
};
std::unique_ptr<PlatformState> state;

double bw_factor(const std::vector<sg4::Link*>& links)
{
  const models::NetworkFacts& n = *state->net;
  const double m                = state->platform.message_bytes;
  for (const sg4::Link* l : links)
    if (state->nic_links.count(l))
      return n.nic_achievable_bytes_per_s / state->nic_raw *
             models::NetworkFacts::efficiency(m, n.nic_message_overhead_bytes);
  for (const sg4::Link* l : links)
    if (state->mesh_links.count(l))
      return n.mesh_link_achievable_bytes_per_s / n.mesh_link_bytes_per_s *
             models::NetworkFacts::efficiency(m, n.nvlink_message_overhead_bytes);
  return n.nvlink_achievable_bytes_per_s / state->nvlink_raw *
         models::NetworkFacts::efficiency(m, n.nvlink_message_overhead_bytes);
}

/*** Scale-up fabrics, one row per models::ScaleUpTopology: each builds its links and answers the route between two
 *** GPUs of one domain ***/

using ScaleUpRoute = std::function<std::vector<sg4::LinkInRoute>(int a, int b)>;

/** @brief NVSwitch star: the GPU's port each way; the switch itself is non-blocking. */
ScaleUpRoute build_switch(sg4::NetZone* zone, const PlatformSpec& spec, int n)
{
  const models::HwProfile& hw = *spec.hw;
  std::vector<sg4::Link*> up, down;
  for (int g = 0; g < n; ++g) {
    up.push_back(zone->create_link(fmt::format("nvl{}_up", g), hw.nvlink_bytes_per_s)
                     ->set_latency(hw.nvlink_latency_us * 1e-6 / 2)
                     ->seal());
    down.push_back(zone->create_link(fmt::format("nvl{}_down", g), hw.nvlink_bytes_per_s)
                       ->set_latency(hw.nvlink_latency_us * 1e-6 / 2)
                       ->seal());
  }
  return [up, down](int a, int b) {
    return std::vector<sg4::LinkInRoute>{sg4::LinkInRoute(up[a]), sg4::LinkInRoute(down[b])};
  };
}

/** @brief Full mesh (xGMI): one link per ordered pair of GPUs in a node (each direction of a physical link), at one
 *  link's rate: a pair's traffic never shares a link with another pair's. */
ScaleUpRoute build_full_mesh(sg4::NetZone* zone, const PlatformSpec& spec, int n)
{
  const models::NetworkFacts& net = *spec.net;
  const int gpn                   = spec.gpus_per_node;
  if (gpn - 1 > net.mesh_links_per_gpu || !(net.mesh_link_bytes_per_s > 0))
    throw InputError(
        "hwprofiles/network/" + net.name + ".yaml",
        fmt::format("a full mesh of {} links per GPU cannot join {} GPUs per node", net.mesh_links_per_gpu, gpn));
  std::map<std::pair<int, int>, sg4::Link*> link;
  for (int a = 0; a < n; ++a)
    for (int b = (a / gpn) * gpn; b < std::min(n, (a / gpn + 1) * gpn); ++b) {
      if (a == b)
        continue;
      sg4::Link* l = zone->create_link(fmt::format("mesh{}_{}", a, b), net.mesh_link_bytes_per_s)
                         ->set_latency(spec.hw->nvlink_latency_us * 1e-6)
                         ->seal();
      state->mesh_links.insert(l);
      link[{a, b}] = l;
    }
  return [link](int a, int b) { return std::vector<sg4::LinkInRoute>{sg4::LinkInRoute(link.at({a, b}))}; };
}

struct ScaleUpBuilder {
  models::ScaleUpTopology topology;
  ScaleUpRoute (*build)(sg4::NetZone*, const PlatformSpec&, int);
};

const std::vector<ScaleUpBuilder>& scale_up_builders()
{
  static const std::vector<ScaleUpBuilder> r = {{models::ScaleUpTopology::switched, &build_switch},
                                                {models::ScaleUpTopology::full_mesh, &build_full_mesh}};
  return r;
}

/** The scale-out network: each GPU's host and NIC links to its rail's leaf switch, the leaves' links to the spine. */
struct FatTree {
  std::vector<sg4::Link*> nic_up, nic_down, leaf_up, leaf_down;
  int groups     = 1; ///< groups of leaf_switch_down_ports nodes (a leaf per rail and group)
  int down_ports = 1;
};

/** Each GPU's host and its NIC's links (the GPU's NIC to its rail's leaf switch, and the leaf back down). */
void add_gpus_and_nics(sg4::NetZone* zone, const PlatformSpec& spec, int n, FatTree& ft)
{
  const models::HwProfile& hw = *spec.hw;
  const double us             = 1e-6;
  ClusterPlatform& p          = state->platform;
  for (int g = 0; g < n; ++g) {
    p.gpus.push_back(zone->create_host(fmt::format("gpu{}", g), 1e12));
    ft.nic_up.push_back(
        zone->create_link(fmt::format("nic{}_up", g), hw.nic_bytes_per_s)->set_latency(hw.nic_latency_us * us)->seal());
    ft.nic_down.push_back(zone->create_link(fmt::format("nic{}_down", g), hw.nic_bytes_per_s)
                              ->set_latency(spec.net->switch_latency_us * us)
                              ->seal());
    state->nic_links.insert(ft.nic_up.back());
    state->nic_links.insert(ft.nic_down.back());
  }
}

/** One leaf per (rail, group of down_ports nodes); its up-links to the spine carry down_ports NICs' worth / ratio. */
void add_leaves(sg4::NetZone* zone, const PlatformSpec& spec, FatTree& ft)
{
  const models::HwProfile& hw = *spec.hw;
  const double us             = 1e-6;
  const int down_ports        = ft.down_ports;
  const double leaf_bw        = down_ports * hw.nic_bytes_per_s / spec.oversubscription;
  for (int l = 0; l < spec.gpus_per_node * ft.groups; ++l) {
    ft.leaf_up.push_back(
        zone->create_link(fmt::format("leaf{}_up", l), leaf_bw)->set_latency(spec.net->switch_latency_us * us)->seal());
    ft.leaf_down.push_back(zone->create_link(fmt::format("leaf{}_down", l), leaf_bw)
                               ->set_latency(spec.net->switch_latency_us * us)
                               ->seal());
    state->nic_links.insert(ft.leaf_up.back());
    state->nic_links.insert(ft.leaf_down.back());
  }
}

/** A route between every two GPUs: inside a node the scale-up fabric's, across nodes NIC, leaf (and the spine when
 *  the leaves differ), NIC. */
void add_routes(sg4::NetZone* zone, const PlatformSpec& spec, int n, const ScaleUpRoute& scale_up, const FatTree& ft)
{
  const int gpn      = spec.gpus_per_node;
  ClusterPlatform& p = state->platform;
  auto leaf_of       = [&](int g) { return (g % gpn) * ft.groups + (g / gpn) / ft.down_ports; };
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b)
        continue;
      std::vector<sg4::LinkInRoute> route;
      if (a / gpn == b / gpn) {
        route = scale_up(a, b);
      } else {
        route.emplace_back(ft.nic_up[a]);
        if (leaf_of(a) != leaf_of(b)) { // another rail or group: up to the spine and down
          route.emplace_back(ft.leaf_up[leaf_of(a)]);
          route.emplace_back(ft.leaf_down[leaf_of(b)]);
        }
        route.emplace_back(ft.nic_down[b]);
      }
      zone->add_route(p.gpus[a]->get_netpoint(), p.gpus[b]->get_netpoint(), nullptr, nullptr, route, false);
    }
}

} // namespace

ClusterPlatform& build_cluster_platform(const PlatformSpec& spec)
{
  if (state)
    throw InternalError("build_cluster_platform: one platform per process");
  if (!spec.hw || !spec.net || spec.nodes < 1 || spec.gpus_per_node < 1 || !(spec.oversubscription >= 1))
    throw InternalError("build_cluster_platform: bad spec");
  const models::HwProfile& hw = *spec.hw;
  state                       = std::make_unique<PlatformState>();
  state->net                  = spec.net;
  state->nvlink_raw           = hw.nvlink_bytes_per_s;
  state->nic_raw              = hw.nic_bytes_per_s;
  ClusterPlatform& p          = state->platform;
  p.gpus_per_node             = spec.gpus_per_node;
  const int n                 = spec.nodes * spec.gpus_per_node;
  FatTree ft;
  ft.down_ports = std::max(1, spec.net->leaf_switch_down_ports);
  ft.groups     = (spec.nodes + ft.down_ports - 1) / ft.down_ports;

  auto* zone = sg4::create_full_zone("cluster");
  ScaleUpRoute scale_up;
  for (const ScaleUpBuilder& b : scale_up_builders())
    if (b.topology == spec.net->scale_up_topology)
      scale_up = b.build(zone, spec, n);
  if (!scale_up)
    throw InternalError("build_cluster_platform: a scale-up topology without a builder");
  add_gpus_and_nics(zone, spec, n, ft);
  add_leaves(zone, spec, ft);
  add_routes(zone, spec, n, scale_up, ft);
  zone->seal();
  sg4::Engine::get_instance()->get_netzone_root()->get_network_model()->set_bw_factor_cb(
      [](double, const sg4::Host*, const sg4::Host*, const std::vector<sg4::Link*>& links,
         const std::unordered_set<sg4::NetZone*>&) { return bw_factor(links); });
  return p;
}

std::vector<double> run_all_to_all(ClusterPlatform& p, const std::vector<std::vector<double>>& bytes, A2aExec mode,
                                   double message_bytes)
{
  const int n     = static_cast<int>(bytes.size());
  const int gpn   = p.gpus_per_node;
  p.message_bytes = message_bytes;
  const double t0 = sg4::Engine::get_clock();
  struct Flow {
    sg4::CommPtr comm;
    int src;
    std::vector<int> dsts; ///< ranks whose bytes it carries
  };
  std::vector<Flow> flows;
  auto start = [&](int src, int via, double amount, std::vector<int> dsts) {
    if (amount <= 0)
      return;
    sg4::CommPtr c = sg4::Comm::sendto_async(p.gpus[src], p.gpus[via], static_cast<std::uint64_t>(amount));
    flows.push_back({c, src, std::move(dsts)});
  };
  for (int s = 0; s < n; ++s) {
    if (mode == A2aExec::per_flow) {
      for (int d = 0; d < n; ++d)
        if (d != s)
          start(s, d, bytes[s][d], {d});
      continue;
    }
    for (int d = 0; d < n; ++d) // inside the node: one flow per pair
      if (d != s && d / gpn == s / gpn)
        start(s, d, bytes[s][d], {d});
    for (int node = 0; node * gpn < n; ++node) { // other nodes: one flow to the same-rail GPU
      if (node == s / gpn)
        continue;
      double amount = 0;
      std::vector<int> dsts;
      for (int d = node * gpn; d < std::min(n, (node + 1) * gpn); ++d)
        if (bytes[s][d] > 0) {
          amount += bytes[s][d];
          dsts.push_back(d);
        }
      start(s, std::min(n - 1, node * gpn + s % gpn), amount, std::move(dsts));
    }
  }
  std::vector<sg4::CommPtr> comms;
  for (const Flow& f : flows)
    comms.push_back(f.comm);
  sg4::Comm::wait_all(comms);
  std::vector<double> done(n, 0.0);
  for (const Flow& f : flows) {
    const double end_us = (f.comm->get_finish_time() - t0) * 1e6;
    done[f.src]         = std::max(done[f.src], end_us);
    for (int d : f.dsts)
      done[d] = std::max(done[d], end_us);
  }
  return done;
}

} // namespace dbosim::sim

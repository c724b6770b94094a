/* dbosim tests — the SimGrid cluster platform (NVSwitch per node, a NIC per GPU on a rail-optimised fat tree, link
 * efficiency as a bandwidth-factor callback): aggregated all-to-all flows match one flow per rank pair on a small
 * case, and the per-flow run agrees with the analytic DeepEP low-latency model's transfer term. */
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/All2AllModel.hpp"
#include "models/CommOps.hpp"
#include "sim/engine/ClusterPlatform.hpp"
#include "sim/engine/SimConfig.hpp"

#include <simgrid/s4u.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

using namespace dbosim;
using namespace dbosim::models;
namespace sg4 = simgrid::s4u;

TEST_CASE("cluster::platform: aggregated all-to-all matches per-flow at EP16 and the analytic transfer time",
          "[quick][cluster]")
{
  ModelSpec m      = load_model_zoo("deepseek-v3");
  HwProfile hw     = load_hw_profile("h800");
  NetworkFacts net = load_network_facts("h800");
  const int ep     = 16;
  RoutingSpec spec;
  spec.dist          = RoutingDist::uniform;
  spec.seed          = 11;
  ExpertPlacement pl = place_experts(spec, 256, ep);
  RoutingMatrix rm   = route_tokens(spec, pl, 256, m.top_k, ep, 8, 128);
  const double b     = dispatch_bytes_per_copy(m);
  std::vector<std::vector<double>> bytes(ep, std::vector<double>(ep, 0.0));
  for (int s = 0; s < ep; ++s)
    for (int d = 0; d < ep; ++d)
      bytes[s][d] = rm.copies[s][d] * b;

  std::vector<std::string> args = sim::engine_args("cluster_platform_test", {});
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());
  sim::PlatformSpec ps;
  ps.nodes                = 2;
  ps.gpus_per_node        = 8;
  ps.hw                   = &hw;
  ps.net                  = &net;
  sim::ClusterPlatform& p = sim::build_cluster_platform(ps);
  std::vector<double> per_flow, aggregated;
  sg4::Actor::create("driver", p.gpus[0], [&p, &bytes, &per_flow, &aggregated, b] {
    per_flow   = sim::run_all_to_all(p, bytes, sim::A2aExec::per_flow, b);
    aggregated = sim::run_all_to_all(p, bytes, sim::A2aExec::aggregated, b);
  });
  engine.run();

  const double pf = *std::max_element(per_flow.begin(), per_flow.end());
  const double ag = *std::max_element(aggregated.begin(), aggregated.end());
  All2AllContext ctx{&m, &hw, &net, 8, 0, 1.0};
  const auto ranks = all2all_per_rank(All2AllBackend::deepep_low_latency, OpKind::D, rm, ctx);
  double transfer  = 0; // the analytic model's wire term (no fixed latency or receive pass)
  for (const RankComm& c : ranks)
    transfer = std::max(
        transfer, c.rdma_bytes /
                      (net.nic_achievable_bytes_per_s * NetworkFacts::efficiency(b, net.nic_message_overhead_bytes)) *
                      1e6);
  WARN(
      fmt::format("EP16 LL dispatch on the platform: per-flow {:.1f} us, aggregated {:.1f} us, analytic wire {:.1f} us",
                  pf, ag, transfer));
  CHECK(ag == Approx(pf).epsilon(0.10));
  CHECK(pf == Approx(transfer).epsilon(0.15));
}

// AMD's 8-GPU xGMI node is a full mesh: 7 links per GPU, one per peer, 64 GB/s each (48 usable). An EP8 all-to-all
// whose traffic leans on one pair is bounded by that pair's single link, not by the GPU's 7-link sum (what a switch of
// the same per-GPU rate would give). Working: every pair carries B except 0 -> 1, which carries 4B. On the mesh, the
// hot link takes 4B / 48 GB/s; through a switch, GPU 0's port would take its 10B at 7 x 48 = 336 GB/s: 2.8x less.
TEST_CASE("cluster::platform: an EP8 all-to-all on the xGMI full mesh is bounded per link and not per GPU",
          "[quick][cluster]")
{
  ModelSpec m      = load_model_zoo("deepseek-v3");
  HwProfile hw     = load_hw_profile("mi300x");
  NetworkFacts net = load_network_facts("mi300x");
  REQUIRE(net.scale_up_topology == ScaleUpTopology::full_mesh);
  REQUIRE(net.mesh_links_per_gpu == 7);
  const int ep         = 8;
  const double B       = 64e6; // bytes per pair: large, so latency and per-message overhead are below 0.1%
  const double message = 1e9;  // the factor's message size: efficiency ~1
  std::vector<std::vector<double>> uniform(ep, std::vector<double>(ep, B)), skewed;
  for (int r = 0; r < ep; ++r)
    uniform[r][r] = 0;
  skewed       = uniform;
  skewed[0][1] = 4 * B;

  std::vector<std::string> args = sim::engine_args("cluster_platform_test", {});
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());
  sim::PlatformSpec ps;
  ps.nodes                = 1;
  ps.gpus_per_node        = ep;
  ps.hw                   = &hw;
  ps.net                  = &net;
  sim::ClusterPlatform& p = sim::build_cluster_platform(ps);
  std::vector<double> t_uniform, t_skewed;
  sg4::Actor::create("driver", p.gpus[0], [&p, &uniform, &skewed, &t_uniform, &t_skewed, message] {
    t_uniform = sim::run_all_to_all(p, uniform, sim::A2aExec::per_flow, message);
    t_skewed  = sim::run_all_to_all(p, skewed, sim::A2aExec::per_flow, message);
  });
  engine.run();

  const double link_us   = B / net.mesh_link_achievable_bytes_per_s * 1e6; // one pair's B on its own link
  const double uniform_t = *std::max_element(t_uniform.begin(), t_uniform.end());
  const double skewed_t  = *std::max_element(t_skewed.begin(), t_skewed.end());
  const double switch_t  = 10 * B / net.nvlink_achievable_bytes_per_s * 1e6; // GPU 0's bytes at its 7-link sum
  WARN(fmt::format("EP8 on the xGMI mesh: uniform {:.1f} us (one link {:.1f}), skewed {:.1f} us vs {:.1f} through a "
                   "switch of the same per-GPU rate",
                   uniform_t, link_us, skewed_t, switch_t));
  // Uniform traffic: the 7 links run in parallel, each pair at one link's rate (= 7B at the 7-link sum).
  CHECK(uniform_t == Approx(link_us).epsilon(0.01));
  // Skewed: the 0 -> 1 link alone carries 4B; a per-GPU bound would say 10B / 336 GB/s.
  CHECK(skewed_t == Approx(4 * link_us).epsilon(0.01));
  CHECK(skewed_t > 2.5 * switch_t);

  // The analytic model (the path scenarios take) agrees: DeepEP low-latency's transfer term on the same traffic.
  RoutingMatrix rm;
  rm.ep          = ep;
  const double b = dispatch_bytes_per_copy(m);
  rm.copies      = skewed;
  for (auto& row : rm.copies)
    for (double& v : row)
      v /= b;
  rm.rank_dedup = rm.copies;
  rm.node_dedup.assign(ep, std::vector<double>(1, 0.0));
  All2AllContext ctx{&m, &hw, &net, ep, 0, 1.0};
  const auto ranks  = all2all_per_rank(All2AllBackend::deepep_low_latency, OpKind::D, rm, ctx);
  const double eff  = NetworkFacts::efficiency(b, net.nvlink_message_overhead_bytes);
  const double wire = ranks[0].duration_us - ranks[0].recv_us - 2 * hw.nvlink_latency_us;
  CHECK(wire == Approx(4 * link_us / eff).epsilon(0.01));
  CHECK(ranks[0].bottleneck == CommBottleneck::nvlink);
}

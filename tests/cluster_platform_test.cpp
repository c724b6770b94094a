/* dbosim tests — the SimGrid cluster platform (NVSwitch per node, a NIC per GPU on a rail-optimised fat tree, link
 * efficiency as a bandwidth-factor callback): aggregated all-to-all flows match one flow per rank pair on a small
 * case, and the per-flow run agrees with the analytic DeepEP low-latency model's transfer term. */
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/All2AllModel.hpp"
#include "models/CommOps.hpp"
#include "sim/ClusterPlatform.hpp"
#include "sim/SimConfig.hpp"

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

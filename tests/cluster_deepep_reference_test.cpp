/* dbosim tests — DeepEP V1 on H800 + CX7 400G (reference-numbers A1, A2) predicted from link facts alone
 * (hwprofiles/h800.yaml, hwprofiles/network/h800.yaml) by models/All2AllModel; every point within 15%. The
 * expected figures live only here, as the check. The profile's two per-message overheads are labelled fitted on A1:
 * a test re-does that fit and prints a leave-one-out table; A2 uses them out of sample. */
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/All2AllModel.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <numeric>

using namespace dbosim;
using namespace dbosim::models;

namespace {

constexpr double tolerance = 0.15;

struct Fixture {
  ModelSpec model  = load_model_zoo("deepseek-v3"); // hidden 7168, top-8, FP8 dispatch, BF16 combine
  HwProfile hw     = load_hw_profile("h800");
  NetworkFacts net = load_network_facts("h800");
};

/** @brief Per-rank costs of one collective: `tokens` per rank, uniform routing (DeepEP's tests draw random scores). */
std::vector<RankComm> run(Fixture& f, All2AllBackend b, OpKind kind, int ep, int experts, int tokens, int groups,
                          int topk_groups)
{
  ModelSpec m          = f.model;
  m.num_routed_experts = experts;
  RoutingSpec spec;
  spec.dist          = RoutingDist::uniform;
  spec.seed          = 7;
  spec.groups        = groups;
  spec.topk_groups   = topk_groups;
  ExpertPlacement pl = place_experts(spec, experts, ep);
  RoutingMatrix rm   = route_tokens(spec, pl, experts, m.top_k, ep, f.hw.nvlink_domain_size, tokens);
  All2AllContext ctx{&m, &f.hw, &f.net, f.hw.nvlink_domain_size, 24};
  return all2all_per_rank(b, kind, rm, ctx);
}

double mean_reported_gbps(const std::vector<RankComm>& r)
{
  double bytes = 0;
  for (const RankComm& c : r)
    bytes += c.reported_bytes;
  return bytes / static_cast<double>(r.size()) / all2all_completion_us(r) * 1e-3;
}

bool within(double predicted, double reference) { return std::abs(predicted / reference - 1.0) <= tolerance; }

// reference-numbers.md A1 (DeepEP README @d8dd185, NVLink inside a node): 128 tokens/rank, top-8, 288 experts.
const std::vector<int> a1_ep         = {8, 16, 32, 64, 128, 256};
const std::vector<double> a1_disp_us = {77, 118, 155, 173, 192, 194};
const std::vector<double> a1_comb_us = {114, 195, 273, 314, 369, 360};

/** @brief The 12 A1 points (6 EP sizes x {D, C}), their routing drawn once; predictions for any message overheads. */
struct A1Points {
  Fixture f;
  std::vector<ModelSpec> models;
  std::vector<RoutingMatrix> routing;
  A1Points()
  {
    for (int ep : a1_ep) {
      ModelSpec m          = f.model;
      m.num_routed_experts = 288 / ep * ep; // DeepEP needs experts divisible by ranks: 288 rounded down
      RoutingSpec spec;
      spec.dist          = RoutingDist::uniform;
      spec.seed          = 7;
      ExpertPlacement pl = place_experts(spec, m.num_routed_experts, ep);
      routing.push_back(route_tokens(spec, pl, m.num_routed_experts, m.top_k, ep, f.hw.nvlink_domain_size, 128));
      models.push_back(m);
    }
  }
  double reference(std::size_t i) const { return i % 2 == 0 ? a1_disp_us[i / 2] : a1_comb_us[i / 2]; }
  /** Point i: EP a1_ep[i / 2], dispatch when i is even, combine when odd. */
  double predict(std::size_t i, double nvl_overhead_bytes, double nic_overhead_bytes) const
  {
    NetworkFacts net                  = f.net;
    net.nvlink_message_overhead_bytes = nvl_overhead_bytes;
    net.nic_message_overhead_bytes    = nic_overhead_bytes;
    All2AllContext ctx{&models[i / 2], &f.hw, &net, f.hw.nvlink_domain_size, 24};
    return all2all_completion_us(
        all2all_per_rank(All2AllBackend::deepep_low_latency, i % 2 ? OpKind::C : OpKind::D, routing[i / 2], ctx));
  }
  static constexpr std::size_t size() { return 12; }
};

struct Overheads {
  double nvl_bytes = 0, nic_bytes = 0;
};

/** @brief Least squares of log(pred/ref) over the points not `left_out`: a 512-byte grid over [0, 8 KiB]^2, then a
 *  128-byte grid within one coarse step of its best. */
Overheads fit_overheads(const A1Points& pts, std::size_t left_out)
{
  Overheads best;
  double best_cost = 1e300;
  auto search      = [&](double nvl_lo, double nic_lo, double span_bytes, double step_bytes) {
    for (double nvl = std::max(0.0, nvl_lo); nvl <= nvl_lo + span_bytes; nvl += step_bytes)
      for (double nic = std::max(0.0, nic_lo); nic <= nic_lo + span_bytes; nic += step_bytes) {
        double cost = 0;
        for (std::size_t i = 0; i < pts.size(); ++i)
          if (i != left_out)
            cost += std::pow(std::log(pts.predict(i, nvl, nic) / pts.reference(i)), 2);
        if (cost < best_cost) {
          best_cost = cost;
          best      = {nvl, nic};
        }
      }
  };
  search(0, 0, 8192, 512);
  const Overheads coarse = best;
  search(coarse.nvl_bytes - 512, coarse.nic_bytes - 512, 1024, 128);
  return best;
}

} // namespace

TEST_CASE("cluster::DeepEP low-latency dispatch/combine latency on H800 (A1) within 15%", "[quick][cluster]")
{
  A1Points pts;
  const NetworkFacts& net = pts.f.net;
  std::string table = fmt::format("{:>5} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}  bottleneck\n", "EP", "D pred", "D ref",
                                  "err", "C pred", "C ref", "err");
  int failures      = 0;
  for (std::size_t e = 0; e < a1_ep.size(); ++e) {
    const double pd = pts.predict(2 * e, net.nvlink_message_overhead_bytes, net.nic_message_overhead_bytes);
    const double pc = pts.predict(2 * e + 1, net.nvlink_message_overhead_bytes, net.nic_message_overhead_bytes);
    All2AllContext ctx{&pts.models[e], &pts.f.hw, &net, pts.f.hw.nvlink_domain_size, 24};
    const std::string bn =
        all2all_per_rank(All2AllBackend::deepep_low_latency, OpKind::D, pts.routing[e], ctx)[0].bottleneck;
    table += fmt::format("{:>5} {:>9.1f} {:>9.0f} {:>+6.1f}% {:>9.1f} {:>9.0f} {:>+6.1f}%  {}\n", a1_ep[e], pd,
                         a1_disp_us[e], 100 * (pd / a1_disp_us[e] - 1), pc, a1_comb_us[e],
                         100 * (pc / a1_comb_us[e] - 1), bn);
    failures += !within(pd, a1_disp_us[e]) + !within(pc, a1_comb_us[e]);
  }
  WARN("DeepEP low-latency, predicted vs reference (A1):\n" << table);
  CHECK(failures == 0);
}

// The two per-message overheads of hwprofiles/network/h800.yaml are labelled fitted on A1: the profile must hold the
// fit over all 12 points, and each point predicted by a fit on the other 11 must stay within the tolerance.
TEST_CASE("cluster::DeepEP low-latency message overheads: the profile holds the A1 fit, leave-one-out within 15%",
          "[slow][cluster]")
{
  A1Points pts;
  const Overheads all = fit_overheads(pts, pts.size());
  CHECK(pts.f.net.nvlink_message_overhead_bytes == Approx(all.nvl_bytes));
  CHECK(pts.f.net.nic_message_overhead_bytes == Approx(all.nic_bytes));
  std::string table = fmt::format("fit on all 12: NVLink {:.0f} B, NIC {:.0f} B per message\n{:>5} {:>3} {:>9} "
                                  "{:>9} {:>9} {:>7}\n",
                                  all.nvl_bytes, all.nic_bytes, "EP", "op", "NVL B", "NIC B", "pred", "err");
  int failures      = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Overheads o = fit_overheads(pts, i);
    const double p    = pts.predict(i, o.nvl_bytes, o.nic_bytes);
    table +=
        fmt::format("{:>5} {:>3} {:>9.0f} {:>9.0f} {:>9.1f} {:>+6.1f}%  (ref {:.0f} us)\n", a1_ep[i / 2],
                    i % 2 ? "C" : "D", o.nvl_bytes, o.nic_bytes, p, 100 * (p / pts.reference(i) - 1), pts.reference(i));
    failures += !within(p, pts.reference(i));
  }
  WARN("DeepEP low-latency leave-one-out (fit on 11 points, predict the 12th):\n" << table);
  CHECK(failures == 0);
}

/** @brief A2 rows predicted vs reference; returns the points outside the tolerance. */
int check_a2(Fixture& f, const std::vector<std::array<double, 3>>& ref)
{
  std::string table = fmt::format("{:>5} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}  bound D/C\n", "EP", "D pred", "D ref",
                                  "err", "C pred", "C ref", "err");
  int failures      = 0;
  for (const auto& [epd, dref, cref] : ref) {
    const int ep     = static_cast<int>(epd);
    const int nodes  = ep / 8;
    const int groups = nodes > 1 ? nodes : 0; // DeepEP's internode test: one group per node, top min(nodes, 4)
    auto d = run(f, All2AllBackend::deepep_high_throughput, OpKind::D, ep, 256, 4096, groups, std::min(nodes, 4));
    auto c = run(f, All2AllBackend::deepep_high_throughput, OpKind::C, ep, 256, 4096, groups, std::min(nodes, 4));
    const double bd = mean_reported_gbps(d), bc = mean_reported_gbps(c);
    table += fmt::format("{:>5} {:>9.1f} {:>9.0f} {:>+6.1f}% {:>9.1f} {:>9.0f} {:>+6.1f}%  {}/{}\n", ep, bd, dref,
                         100 * (bd / dref - 1), bc, cref, 100 * (bc / cref - 1), d[0].bottleneck, c[0].bottleneck);
    failures += !within(bd, dref) + !within(bc, cref);
  }
  WARN("DeepEP high-throughput GB/s, predicted vs reference (A2):\n" << table);
  return failures;
}

// reference-numbers.md A2 (DeepEP README, tests with num_sms=24): 4096 tokens, top-8, 4 top groups, 256 experts;
// {ep, dispatch GB/s, combine GB/s}. The message overheads come from the A1 fit: A2 is out of sample for them.
TEST_CASE("cluster::DeepEP high-throughput bandwidth on H800 (A2) within 15%", "[slow][cluster]")
{
  Fixture f;
  CHECK(check_a2(f, {{8, 153, 158}, {16, 43, 43}, {32, 58, 57}, {64, 51, 50}}) == 0);
}

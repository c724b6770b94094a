/* dbosim tests — MoRI-EP IntraNode EP8 on MI300X and MI355X (the MORI-EP table of ROCm/mori README.md: 4096-token
 * bandwidths, 128-token latencies) predicted from the xGMI full-mesh facts (hwprofiles/network/<gpu>.yaml) by the
 * mori backend of models/All2AllModel.cpp; every point within 20%. The published figures are read from
 * validate/cases/mori.yaml, the file `dbosim validate` checks, so each is written once. The network facts' `mori:
 * call_fixed` is labelled fitted: a test re-does that fit (the mean residual of the four latency points) and a
 * leave-one-out check; the bandwidth points are out of sample. Also: the `mori:` keys' input errors. */
#include "TempDir.hpp"

#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/All2AllModel.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace dbosim;
using namespace dbosim::models;

namespace {

constexpr double tolerance = 0.20;

/** @brief One published point of validate/cases/mori.yaml. */
struct Point {
  std::string name, profile, metric;
  OpKind kind;
  int tokens;
  double measured;
};

std::vector<Point> points()
{
  const std::string path = std::string(DBOSIM_SOURCE_DIR) + "/validate/cases/mori.yaml";
  std::vector<Point> out;
  for (const YAML::Node& c : YAML::LoadFile(path)["cases"])
    out.push_back(Point{c["name"].as<std::string>(), c["profile"].as<std::string>(), c["metric"].as<std::string>(),
                        c["op"].as<std::string>() == "D" ? OpKind::D : OpKind::C, c["tokens"].as<int>(),
                        c["measured"].as<double>()});
  return out;
}

/** @brief The point's prediction (us or GB/s as the case's metric) with the given per-call fixed cost, on balanced
 *  (expected) routing as `dbosim validate` predicts it: MoRI's benchmark draws uniform routing (a random permutation
 *  of the experts per token), whose expectation every rank pair shares. */
double predict(const Point& p, double call_fixed_us)
{
  const ModelSpec m      = load_model_zoo("deepseek-v3");
  const HwProfile hw     = load_hw_profile(p.profile);
  NetworkFacts net       = load_network_facts(p.profile);
  net.mori.call_fixed_us = call_fixed_us;
  RoutingSpec spec;
  spec.dist          = RoutingDist::balanced;
  ExpertPlacement pl = place_experts(spec, m.num_routed_experts, 8);
  RoutingMatrix rm   = route_tokens(spec, pl, m.num_routed_experts, m.top_k, 8, hw.nvlink_domain_size, p.tokens);
  All2AllContext ctx{&m, &hw, &net, hw.nvlink_domain_size, 80};
  const std::vector<RankComm> r = all2all_per_rank(All2AllBackend::mori, p.kind, rm, ctx);
  // MoRI reports the mean over ranks of each rank's duration and of its received bytes / that duration.
  double us = 0, gbps = 0;
  for (const RankComm& c : r) {
    us += c.duration_us / static_cast<double>(r.size());
    gbps += c.reported_bytes / c.duration_us * 1e-3 / static_cast<double>(r.size());
  }
  return p.metric == "us" ? us : gbps;
}

/** @brief The fit of `mori: call_fixed`: the mean over the latency points (but `left_out`) of the published latency
 *  less the model's latency without a fixed cost. */
double fit_call_fixed(const std::vector<Point>& pts, std::size_t left_out)
{
  double sum = 0;
  int n      = 0;
  for (std::size_t i = 0; i < pts.size(); ++i)
    if (pts[i].metric == "us" && i != left_out) {
      sum += pts[i].measured - predict(pts[i], 0.0);
      ++n;
    }
  REQUIRE(n > 0);
  return sum / n;
}

} // namespace

TEST_CASE("models::All2AllModel mori: the published MoRI-EP EP8 table within 20% from the xGMI facts", "[cluster]")
{
  const std::vector<Point> pts = points();
  REQUIRE(pts.size() == 8); // D and C, bandwidth and latency, MI300X and MI355X
  double abs_err = 0;
  for (const Point& p : pts) {
    const double fixed = load_network_facts(p.profile).mori.call_fixed_us;
    const double pred  = predict(p, fixed);
    const double err   = pred / p.measured - 1.0;
    abs_err += std::abs(err);
    INFO(fmt::format("{}: predicted {:.1f}, published {:.1f} {} ({:+.1f}%)", p.name, pred, p.measured, p.metric,
                     100 * err));
    CHECK(std::abs(err) <= tolerance);
  }
  WARN(fmt::format("mori EP8 table: MAPE {:.1f}% over {} points", 100 * abs_err / pts.size(), pts.size()));
}

TEST_CASE("models::All2AllModel mori: the fitted call_fixed is the documented fit, and holds out of sample",
          "[cluster]")
{
  const std::vector<Point> pts = points();
  const double fit             = fit_call_fixed(pts, pts.size());
  for (const std::string gpu : {"mi300x", "mi325x", "mi355x"})
    CHECK(load_network_facts(gpu).mori.call_fixed_us == Approx(fit).margin(0.05)); // the files' 0.1 us rounding
  // Leave one out: refit without the point, predict it (the bandwidth points never enter the fit).
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (pts[i].metric != "us")
      continue;
    const double f    = fit_call_fixed(pts, i);
    const double pred = predict(pts[i], f);
    INFO(fmt::format("leave-one-out {}: call_fixed {:.1f} us, predicted {:.1f} us, published {:.0f} us ({:+.1f}%)",
                     pts[i].name, f, pred, pts[i].measured, 100 * (pred / pts[i].measured - 1)));
    CHECK(std::abs(pred / pts[i].measured - 1.0) <= tolerance);
  }
}

TEST_CASE("models::All2AllModel mori: fabrics without MoRI facts are refused by name", "[quick]")
{
  const ModelSpec m  = load_model_zoo("deepseek-v3");
  const HwProfile hw = load_hw_profile("h200");
  NetworkFacts net   = load_network_facts("h200");
  RoutingSpec spec;
  ExpertPlacement pl = place_experts(spec, m.num_routed_experts, 8);
  RoutingMatrix rm   = route_tokens(spec, pl, m.num_routed_experts, m.top_k, 8, 8, 64);
  All2AllContext ctx{&m, &hw, &net, 8, 0};
  CHECK_THROWS_WITH(all2all_per_rank(All2AllBackend::mori, OpKind::D, rm, ctx),
                    Catch::Contains("network facts 'h200' have no MoRI kernel facts"));
}

TEST_CASE("config::NetworkFactsLoader: broken mori keys are rejected with file, line and key", "[quick]")
{
  std::stringstream text;
  text << std::ifstream(std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/network/mi300x.yaml").rdbuf();
  const std::string good = text.str();
  test::TempDir dir;
  auto error_of = [&](const std::string& from, const std::string& to) {
    std::string bad = good;
    const auto pos  = bad.find(from);
    REQUIRE(pos != std::string::npos);
    bad.replace(pos, from.size(), to);
    const std::string path = dir.write("bad.yaml", bad);
    try {
      load_network_facts(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    FAIL("network facts loaded but should not");
    return std::string();
  };
  const std::string eff = error_of("dispatch_efficiency: {value: 0.891", "dispatch_efficiency: {value: 1.5");
  CHECK(eff.find("bad.yaml:") != std::string::npos);
  CHECK(eff.find("mori.dispatch_efficiency.value") != std::string::npos);
  CHECK(eff.find("0.01") != std::string::npos); // the valid range
  const std::string fixed = error_of("call_fixed:          {value: \"17.9us\"", "call_fixed:          {value: \"2s\"");
  CHECK(fixed.find("mori.call_fixed.value") != std::string::npos);
  CHECK(error_of("call_fixed:          {value: \"17.9us\", source:", "call_fixed:          {value: \"17.9us\", sauce:")
            .find("mori.call_fixed") != std::string::npos);
  CHECK(error_of("  dispatch_efficiency:", "  dispatch_eff:").find("mori") != std::string::npos);
}

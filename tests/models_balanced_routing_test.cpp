/* dbosim tests — balanced routing in O(ep) memory (models/BalancedRouting): the one-row matrix gives every
 * all-to-all model the same figures as route_tokens' ep equal rows, to the byte, up to all2all_every_rank_max ranks;
 * above it the models price one rank per class of alike ranks, and every rank's figures still agree with its own
 * loop to rounding. EPLB packing (place_experts) keeps the choices of a scan over every rank. */
#include "all2all_test_support.hpp"
#include "config/ModelLoader.hpp"
#include "models/BalancedRouting.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

using namespace dbosim;
using namespace dbosim::models;

namespace {

struct Layout {
  int ep, gpn, redundant;
  double hot_rank_load;
};

RoutingSpec spec_of(const Layout& l)
{
  RoutingSpec spec;
  spec.dist              = RoutingDist::balanced;
  spec.placement         = l.redundant > 0 ? Placement::eplb : Placement::contiguous;
  spec.redundant_experts = l.redundant;
  spec.hot_rank_load     = l.hot_rank_load;
  return spec;
}

/** @brief Every backend the fabric has facts for, dispatch and combine: fn(name, one-row ranks, dense ranks). */
template <class Fn> void each_collective(const Layout& l, int tokens, Fn&& fn)
{
  const ModelSpec m         = load_model_zoo("deepseek-v3");
  const RoutingSpec spec    = spec_of(l);
  const ExpertPlacement pl  = place_experts(spec, m.num_routed_experts, l.ep);
  const RoutingMatrix row   = route_balanced_rows(spec, pl, m.num_routed_experts, m.top_k, l.ep, l.gpn, tokens);
  const RoutingMatrix dense = route_tokens(spec, pl, m.num_routed_experts, m.top_k, l.ep, l.gpn, tokens);
  REQUIRE(has_one_row(row));
  REQUIRE(row.copies.size() == 1);
  CHECK(row.expert_rows == dense.expert_rows);
  CHECK(row.active_experts == dense.active_experts);
  for (const test::All2AllFabric& f : test::all2all_fabrics())
    for (const All2AllEntry& e : all2all_registry()) {
      if ((e.backend == All2AllBackend::mori) != f.net.mori.present)
        continue;
      const All2AllContext ctx{&m, &f.hw, &f.net, l.gpn, 24};
      for (OpKind kind : {OpKind::D, OpKind::C})
        fn(fmt::format("{} {} {} ep={} gpn={}", f.profile, e.name, op_name(kind), l.ep, l.gpn),
           all2all_per_rank(e.backend, kind, row, ctx), all2all_per_rank(e.backend, kind, dense, ctx));
    }
}

} // namespace

TEST_CASE("models::BalancedRouting: one row prices every rank to the byte as ep equal rows", "[quick][cluster]")
{
  // Full and partial nodes, one and two leaf switches, uneven EPLB replica counts and a hot rank.
  for (const Layout& l : {Layout{16, 8, 0, 1.0}, Layout{48, 8, 32, 1.3}, Layout{100, 8, 44, 1.5},
                          Layout{100, 4, 44, 1.0}, Layout{512, 8, 256, 1.2}}) {
    int compared = 0;
    each_collective(l, 128, [&](const std::string& what, const auto& row, const auto& dense) {
      INFO(what);
      test::check_same_ranks(row, dense);
      ++compared;
    });
    CHECK(compared == 2 * static_cast<int>(all2all_registry().size()));
  }
}

TEST_CASE("models::BalancedRouting: above the every-rank bound, one rank per class agrees with each rank's loop",
          "[quick][cluster]")
{
  // 1536 ranks: 192 nodes under 6 leaf switches, a hot rank; 1100 ranks: a partial last node and uneven replicas.
  for (const Layout& l : {Layout{1536, 8, 1280, 1.3}, Layout{1100, 8, 844, 1.0}}) {
    REQUIRE(l.ep > all2all_every_rank_max);
    each_collective(l, 64, [&](const std::string& what, const auto& row, const auto& dense) {
      INFO(what);
      REQUIRE(row.size() == dense.size());
      for (std::size_t r = 0; r < row.size(); ++r) {
        INFO("rank " << r);
        CHECK(row[r].duration_us == Approx(dense[r].duration_us).epsilon(1e-12));
        CHECK(row[r].recv_us == Approx(dense[r].recv_us).epsilon(1e-12));
        CHECK(row[r].nvlink_bytes == Approx(dense[r].nvlink_bytes).epsilon(1e-12));
        CHECK(row[r].rdma_bytes == Approx(dense[r].rdma_bytes).epsilon(1e-12));
        CHECK(row[r].reported_bytes == Approx(dense[r].reported_bytes).epsilon(1e-12));
      }
    });
  }
}

namespace {

/** @brief EPLB packing as a scan of every rank per replica (the form place_experts replaced): the reference. */
std::vector<std::vector<int>> scan_packing(const RoutingSpec& spec, int num_experts, int ep)
{
  const int per_rank             = (num_experts + spec.redundant_experts) / ep;
  const std::vector<double> load = expert_popularity(spec, num_experts);
  std::vector<int> count(num_experts, 1);
  for (int i = 0; i < spec.redundant_experts; ++i) {
    int best = 0;
    for (int e = 1; e < num_experts; ++e)
      if (load[e] / count[e] > load[best] / count[best])
        best = e;
    ++count[best];
  }
  std::vector<std::pair<double, int>> items;
  for (int e = 0; e < num_experts; ++e)
    for (int c = 0; c < count[e]; ++c)
      items.emplace_back(load[e] / count[e], e);
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<int>> reps(num_experts);
  std::vector<int> slots(ep, 0);
  std::vector<double> rank_load(ep, 0.0);
  for (const auto& [l, e] : items) {
    int best = -1;
    for (int pass = 0; pass < 2 && best < 0; ++pass)
      for (int r = 0; r < ep; ++r) {
        if (slots[r] >= per_rank || (pass == 0 && std::find(reps[e].begin(), reps[e].end(), r) != reps[e].end()))
          continue;
        if (best < 0 || rank_load[r] < rank_load[best])
          best = r;
      }
    reps[e].push_back(best);
    ++slots[best];
    rank_load[best] += l;
  }
  return reps;
}

} // namespace

TEST_CASE("models::ExpertRouting: EPLB packing picks what a scan of every rank picks, and 65536 ranks place",
          "[quick][cluster]")
{
  RoutingSpec spec;
  spec.placement = Placement::eplb;
  spec.seed      = 5;
  for (RoutingDist dist : {RoutingDist::balanced, RoutingDist::zipf})
    // {experts, ep, redundant}; the last: a hot expert gets more replicas than there are ranks, so a rank holds two
    for (auto [experts, ep, redundant] : {std::array{256, 8, 8}, std::array{256, 64, 64}, std::array{256, 96, 32},
                                          std::array{256, 1024, 768}, std::array{256, 12, 8}, std::array{4, 2, 4}}) {
      spec.dist              = dist;
      spec.zipf_alpha        = experts < 8 ? 3.0 : 1.0;
      spec.redundant_experts = redundant;
      INFO(routing_dist_name(dist) << " experts=" << experts << " ep=" << ep << " redundant=" << redundant);
      CHECK(place_experts(spec, experts, ep).replicas_rank == scan_packing(spec, experts, ep));
    }
  spec.dist                = RoutingDist::balanced;
  spec.redundant_experts   = 65536 - 256;
  const ExpertPlacement pl = place_experts(spec, 256, 65536);
  CHECK(std::all_of(pl.slots_per_rank.begin(), pl.slots_per_rank.end(), [](int s) { return s == 1; }));
  CHECK(std::all_of(pl.replicas_rank.begin(), pl.replicas_rank.end(),
                    [](const std::vector<int>& r) { return r.size() == 256; }));
}

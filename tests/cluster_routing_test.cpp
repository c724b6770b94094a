/* dbosim tests — expert routing and placement: conservation, determinism from the seed (hand-written sampler, so the
 * draws do not depend on the standard library's distributions), Zipf skew and EPLB's balancing. */
#include "models/ExpertRouting.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

using namespace dbosim::models;

namespace {
double total(const std::vector<std::vector<double>>& m)
{
  double t = 0;
  for (const auto& row : m)
    t += std::accumulate(row.begin(), row.end(), 0.0);
  return t;
}
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
} // namespace

TEST_CASE("cluster::routing: copies are conserved and the draw is a function of the seed", "[quick][cluster]")
{
  RoutingSpec spec;
  spec.seed        = 42;
  const int ep     = 16;
  const int tokens = 64;
  for (RoutingDist dist : {RoutingDist::balanced, RoutingDist::uniform, RoutingDist::zipf}) {
    spec.dist          = dist;
    ExpertPlacement pl = place_experts(spec, 256, ep);
    RoutingMatrix a    = route_tokens(spec, pl, 256, 8, ep, 8, tokens, 0);
    RoutingMatrix b    = route_tokens(spec, pl, 256, 8, ep, 8, tokens, 0);
    CHECK(total(a.copies) == Approx(double(ep) * tokens * 8));
    CHECK(std::accumulate(a.expert_rows.begin(), a.expert_rows.end(), 0.0) == Approx(double(ep) * tokens * 8));
    CHECK(a.copies == b.copies);
    for (int s = 0; s < ep; ++s)
      for (int d = 0; d < ep; ++d)
        CHECK(a.rank_dedup[s][d] <= a.copies[s][d] + 1e-9);
  }
  spec.dist          = RoutingDist::uniform;
  ExpertPlacement pl = place_experts(spec, 256, ep);
  RoutingMatrix u0   = route_tokens(spec, pl, 256, 8, ep, 8, tokens, 0);
  RoutingMatrix u1   = route_tokens(spec, pl, 256, 8, ep, 8, tokens, 1);
  CHECK(u0.copies != u1.copies); // another stream (micro-batch) draws anew
  // Golden: the sampler is ours (top 53 bits of std::mt19937_64, whose sequence the standard fixes), so these
  // counts stay byte-identical across standard libraries.
  CHECK(u0.copies[0][0] == 42);
  CHECK(u0.copies[0][1] == 41);
  CHECK(u0.copies[3][7] == 47);
}

TEST_CASE("cluster::routing: Zipf skews the ranks and EPLB replicas even them out", "[quick][cluster]")
{
  RoutingSpec spec;
  spec.seed                  = 3;
  spec.dist                  = RoutingDist::zipf;
  spec.zipf_alpha            = 1.2;
  const int ep               = 32;
  ExpertPlacement contiguous = place_experts(spec, 256, ep);
  RoutingMatrix skewed       = route_tokens(spec, contiguous, 256, 8, ep, 8, 128);
  spec.placement             = Placement::eplb;
  spec.redundant_experts     = 32;
  ExpertPlacement eplb       = place_experts(spec, 256, ep);
  for (int slots : eplb.slots_per_rank)
    CHECK(slots == 9);
  RoutingMatrix balanced = route_tokens(spec, eplb, 256, 8, ep, 8, 128);
  const double mean      = 128.0 * 8;
  CHECK(max_of(skewed.expert_rows) > 1.5 * mean);
  CHECK(max_of(balanced.expert_rows) < max_of(skewed.expert_rows));
  spec.placement = Placement::contiguous;
  CHECK_THROWS(place_experts(spec, 256, ep)); // redundant experts need eplb
}

TEST_CASE("models::balanced_placement: the kept placement is place_experts', whatever was asked between", "[quick]")
{
  // A function of the placement, the redundant slots, the experts and ep alone: what balanced routing's other fields
  // hold does not move it. More keys than it keeps, so that some come back after being let go.
  struct Ask {
    Placement placement;
    int redundant, experts, ep;
  };
  const std::vector<Ask> asks{{Placement::contiguous, 0, 256, 8},  {Placement::eplb, 32, 256, 32},
                              {Placement::eplb, 32, 256, 36},      {Placement::eplb, 0, 256, 16},
                              {Placement::contiguous, 0, 128, 64}, {Placement::eplb, 64, 256, 64},
                              {Placement::eplb, 16, 128, 16},      {Placement::eplb, 8, 64, 8},
                              {Placement::eplb, 32, 256, 144},     {Placement::contiguous, 0, 256, 256}};
  std::vector<std::shared_ptr<const ExpertPlacement>> first;
  for (int round = 0; round < 2; ++round)
    for (std::size_t i = 0; i < asks.size(); ++i) {
      const Ask& a = asks[i];
      CAPTURE(round, i);
      RoutingSpec spec;
      spec.placement              = a.placement;
      spec.redundant_experts      = a.redundant;
      spec.zipf_alpha             = 2.0; // read by Zipf routing only
      spec.seed                   = 7;
      const ExpertPlacement whole = place_experts(spec, a.experts, a.ep);
      const auto kept             = balanced_placement(a.placement, a.redundant, a.experts, a.ep);
      CHECK(kept->replicas_rank == whole.replicas_rank);
      CHECK(kept->slots_per_rank == whole.slots_per_rank);
      if (round == 0)
        first.push_back(kept);
      else // a placement handed out stays whole after the keeping let it go
        CHECK(first[i]->slots_per_rank == whole.slots_per_rank);
    }
  CHECK(balanced_placement(Placement::eplb, 32, 256, 32) == balanced_placement(Placement::eplb, 32, 256, 32));
  CHECK_THROWS_AS(balanced_placement(Placement::contiguous, 32, 256, 32), std::invalid_argument);
}

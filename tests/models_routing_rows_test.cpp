/* dbosim tests — drawn routing as sparse rows (models::RoutingRows): the rows the draw builds (only the destinations
 * and nodes a source reaches) price every all-to-all model to the byte as the dense matrix of the same draw does
 * (every node entry kept), and the rows hold that matrix's entries. */
#include "all2all_test_support.hpp"
#include "config/ModelLoader.hpp"
#include "models/BalancedRouting.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

using namespace dbosim;
using namespace dbosim::models;

namespace {

struct DrawnCase {
  RoutingDist dist;
  int ep, gpn, redundant, groups, topk_groups, tokens;
};

RoutingSpec spec_of(const DrawnCase& c)
{
  RoutingSpec spec;
  spec.dist              = c.dist;
  spec.zipf_alpha        = 1.1;
  spec.placement         = c.redundant > 0 ? Placement::eplb : Placement::contiguous;
  spec.redundant_experts = c.redundant;
  spec.groups            = c.groups;
  spec.topk_groups       = c.topk_groups;
  spec.seed              = 9;
  return spec;
}

} // namespace

TEST_CASE("models::RoutingRows: drawn sparse rows price every backend to the byte as the dense matrix",
          "[quick][cluster]")
{
  const ModelSpec m = load_model_zoo("deepseek-v3");
  // Full and partial nodes, EPLB replicas, group-limited routing, few tokens (sparse rows) and many (dense ones).
  for (const DrawnCase& c :
       {DrawnCase{RoutingDist::zipf, 64, 8, 64, 0, 0, 16}, DrawnCase{RoutingDist::uniform, 100, 4, 44, 8, 4, 32},
        DrawnCase{RoutingDist::zipf, 36, 8, 32, 0, 0, 256}}) {
    const RoutingSpec spec    = spec_of(c);
    const ExpertPlacement pl  = place_experts(spec, m.num_routed_experts, c.ep);
    const RoutingRows rows    = route_token_rows(spec, pl, m.num_routed_experts, m.top_k, c.ep, c.gpn, c.tokens, 1);
    const RoutingMatrix dense = route_tokens(spec, pl, m.num_routed_experts, m.top_k, c.ep, c.gpn, c.tokens, 1);
    REQUIRE(!has_one_row(rows));
    const RoutingMatrix back = routing_matrix(rows);
    CHECK(back.copies == dense.copies);
    CHECK(back.rank_dedup == dense.rank_dedup);
    CHECK(back.node_dedup == dense.node_dedup);
    CHECK(rows.expert_rows == dense.expert_rows);
    for (const test::All2AllFabric& f : test::all2all_fabrics())
      for (const All2AllEntry& e : all2all_registry()) {
        if ((e.backend == All2AllBackend::mori) != f.net.mori.present)
          continue;
        const All2AllContext ctx{&m, &f.hw, &f.net, c.gpn, 24, 2.0};
        for (OpKind kind : {OpKind::D, OpKind::C}) {
          INFO(fmt::format("{} {} {} ep={} gpn={}", f.profile, e.name, op_name(kind), c.ep, c.gpn));
          test::check_same_ranks(all2all_per_rank(e.backend, kind, rows, ctx),
                                 all2all_per_rank(e.backend, kind, dense, ctx));
        }
      }
  }
}

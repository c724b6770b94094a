/* dbosim — expert routing and placement across the EP group (pure, deterministic): which rank each token's top-k
 * expert copies land on, drawn from the scenario seed with a hand-written sampler (no std::*_distribution, whose
 * algorithms are implementation-defined), and placed contiguously or with EPLB-style redundant replicas. */
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dbosim::models {

/** @brief How tokens pick experts. */
enum class RoutingDist {
  balanced,  ///< expected-value routing: every rank sends top_k·tokens/ep copies to every rank (all ranks symmetric)
  uniform,   ///< each token draws top_k distinct experts uniformly
  zipf,      ///< expert popularity ∝ 1/(rank+1)^alpha over a seed-permuted expert order
  histogram, ///< expert popularity ∝ the given weights
};
std::string routing_dist_name(RoutingDist d);

enum class Placement {
  contiguous, ///< expert e on rank e / (experts/ep), no replica
  eplb,       ///< DeepSeek EPLB: hot experts get redundant replicas, replicas packed to balance expected load
};
std::string placement_name(Placement p);

struct RoutingSpec {
  RoutingDist dist  = RoutingDist::balanced;
  double zipf_alpha = 1.0;
  std::vector<double> histogram; ///< one weight per routed expert (RoutingDist::histogram)
  Placement placement   = Placement::contiguous;
  int redundant_experts = 0; ///< EPLB: extra replica slots over the EP group; experts + redundant divide over ep
  /** Group-limited routing (DeepSeek-V3 topk_group; DeepEP's tests): experts split into `groups` contiguous groups,
   *  a token first picks `topk_groups` groups by weight, then its top_k experts inside them. 0 = off. */
  int groups         = 0;
  int topk_groups    = 0;
  std::uint64_t seed = 0;
  /** Balanced routing only: the share of copies the busiest rank (the one of largest expected share) receives, over
   *  the mean share 1/ep (models/ExpertImbalance: the post-EPLB residual); the other ranks' shares shrink in
   *  proportion so that every token still sends top_k copies. 1 = the expected values. */
  double hot_rank_load = 1.0;
};

/** @brief Where replicas of each expert live. */
struct ExpertPlacement {
  std::vector<std::vector<int>> replicas_rank; ///< per logical expert: ranks holding a replica (>= 1)
  std::vector<int> slots_per_rank;             ///< replicas each rank holds
};

/** @brief One micro-batch's routing over the EP group: per-rank-pair traffic, as doubles so that the balanced
 *  (expected-value) routing can be fractional. Indices: [src][dst]. */
struct RoutingMatrix {
  int ep = 0;
  std::vector<std::vector<double>> copies;     ///< token-expert copies src -> dst (DeepEP low-latency: one per expert)
  std::vector<std::vector<double>> rank_dedup; ///< distinct (token, dst rank) pairs (high-throughput, NCCL)
  std::vector<std::vector<double>> node_dedup; ///< [src][dst node]: distinct (token, node) pairs (HT internode RDMA)
  std::vector<double> expert_rows;             ///< per rank: token copies its experts compute (column sums of copies)
  std::vector<int> active_experts;             ///< per rank: local replicas receiving >= 1 copy (balanced: all)
};

/** @brief One micro-batch's routing as sparse rows, O(ep + entries) where RoutingMatrix is O(ep^2): row s holds the
 *  destination ranks (and nodes) source rank s sends to, ascending, so that a sum over a row runs in RoutingMatrix's
 *  loop order with its zeros left out (an exact sum: adding 0 changes no double), and a walk of the rows in source
 *  order meets each column's entries in ascending source order. A one-row routing (models/BalancedRouting: every
 *  source sends the same row) holds that row densely, once: copies[d], rank_dedup[d], node_dedup[n]. */
struct RoutingRows {
  int ep       = 0;
  int nodes    = 0;
  bool one_row = false;
  /** Rank entries: row s is [row_begin[s], row_begin[s + 1]) (ep + 1 bounds; none when one_row). */
  std::vector<std::size_t> row_begin;
  std::vector<int> dst;           ///< per entry: its destination rank
  std::vector<double> copies;     ///< per entry: token-expert copies (RoutingMatrix::copies)
  std::vector<double> rank_dedup; ///< per entry: distinct (token, dst rank) pairs
  /** Node entries ([src][dst node]: distinct (token, node) pairs), rows as above; a source with an entry to a rank
   *  has an entry to its node. */
  std::vector<std::size_t> node_row_begin;
  std::vector<int> node_dst;
  std::vector<double> node_dedup;
  std::vector<double> expert_rows; ///< per rank: token copies its experts compute (column sums of copies)
  std::vector<int> active_experts; ///< per rank: local replicas receiving >= 1 copy (balanced: all)
};

/** @brief Calls f(dst, copies, rank_dedup) for each destination rank source rank `s` sends to, ascending. */
template <class F> void for_each_in_row(const RoutingRows& rr, int s, F&& f)
{
  if (rr.one_row) {
    for (int d = 0; d < rr.ep; ++d)
      f(d, rr.copies[d], rr.rank_dedup[d]);
    return;
  }
  for (std::size_t i = rr.row_begin[s]; i < rr.row_begin[s + 1]; ++i)
    f(rr.dst[i], rr.copies[i], rr.rank_dedup[i]);
}

/** @brief Calls f(node, node_dedup) for each node source rank `s` sends to, ascending. */
template <class F> void for_each_node_in_row(const RoutingRows& rr, int s, F&& f)
{
  if (rr.one_row) {
    for (int n = 0; n < rr.nodes; ++n)
      f(n, rr.node_dedup[n]);
    return;
  }
  for (std::size_t i = rr.node_row_begin[s]; i < rr.node_row_begin[s + 1]; ++i)
    f(rr.node_dst[i], rr.node_dedup[i]);
}

/** @brief `rm` as sparse rows: a one-row matrix (ep > 1) as one row, another with its non-zero entries (a node entry
 *  also where only its ranks' entries are non-zero). */
RoutingRows routing_rows(RoutingMatrix rm);

/** @brief `rr` as a dense matrix (a one-row routing as one row). */
RoutingMatrix routing_matrix(const RoutingRows& rr);

/** @brief Expected load share of each logical expert (sums to 1). */
std::vector<double> expert_popularity(const RoutingSpec& spec, int num_experts);

/** @brief Replica placement for `ep` ranks. @throws std::invalid_argument when the slots do not divide over ep. */
ExpertPlacement place_experts(const RoutingSpec& spec, int num_experts, int ep);

/** @brief place_experts under balanced routing (every expert's load equal): a function of the placement, the
 *  redundant slots, the experts and ep alone, so the last few asked in this thread are kept (a serving run prices
 *  many step shapes of one deployment, each with the same placement; a placement handed out outlives the keeping). The
 *  same placement as place_experts'.
 *  @throws std::invalid_argument as place_experts throws. */
std::shared_ptr<const ExpertPlacement> balanced_placement(Placement placement, int redundant_experts, int num_experts,
                                                          int ep);

/** @brief Why no token could draw its experts under `spec` (empty when every draw is possible): a histogram that
 *  does not match the experts, fewer than top_k experts with weight, groups that do not divide the experts, weight
 *  in fewer groups than topk_groups, or topk_groups groups holding fewer than top_k weighted experts. */
std::string routing_infeasibility(const RoutingSpec& spec, int num_experts, int top_k);

/** @brief Routes `tokens` tokens on each of `ep` ranks (top_k experts each); `gpus_per_node` groups ranks into nodes.
 *  `stream` separates independent draws (e.g. micro-batch index) under one seed. Each token's experts are drawn
 *  without replacement (models/DistinctDraw), so a draw ends for every distribution routing_infeasibility accepts.
 *  @throws std::invalid_argument when routing_infeasibility names a reason. */
RoutingMatrix route_tokens(const RoutingSpec& spec, const ExpertPlacement& placement, int num_experts, int top_k,
                           int ep, int gpus_per_node, int tokens, std::uint64_t stream = 0);

/** @brief route_tokens as sparse rows, in O(ep + tokens drawn) time and memory for drawn routing (balanced routing:
 *  route_tokens' ep equal rows, converted); `reuse` lends its buffers (e.g. the previous micro-batch's rows). */
RoutingRows route_token_rows(const RoutingSpec& spec, const ExpertPlacement& placement, int num_experts, int top_k,
                             int ep, int gpus_per_node, int tokens, std::uint64_t stream = 0, RoutingRows reuse = {});

} // namespace dbosim::models

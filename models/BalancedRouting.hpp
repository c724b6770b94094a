/* dbosim — balanced (expected-value) routing in O(ep) memory: every source rank sends the same row, so the routing
 * matrix holds that one row for all of them, and the all-to-all models (models/All2AllModel) read it as ep equal
 * rows. route_tokens (models/ExpertRouting) gives the same numbers as ep copies of the row. */
#pragma once
#include "models/ExpertRouting.hpp"

namespace dbosim::models {

/** @brief route_tokens for RoutingDist::balanced with one row: copies, rank_dedup and node_dedup each hold the row
 *  [0][dst] that every source rank sends (expert_rows and active_experts are per rank as in route_tokens).
 *  @throws std::invalid_argument for another distribution, or where route_tokens throws. */
RoutingMatrix route_balanced_rows(const RoutingSpec& spec, const ExpertPlacement& placement, int num_experts, int top_k,
                                  int ep, int gpus_per_node, int tokens);

/** @brief Whether `rm` holds one row that stands for every source rank (route_balanced_rows). */
inline bool has_one_row(const RoutingMatrix& rm) { return rm.ep > 1 && rm.copies.size() == 1; }
/** @brief Whether `rr` holds one row that stands for every source rank. */
inline bool has_one_row(const RoutingRows& rr) { return rr.one_row; }

/** @brief Up to this many ranks the all-to-all models price every rank; above it, from one-row routing, one rank of
 *  each class of ranks whose traffic is the same multiset of terms (equal in exact arithmetic; the summation order
 *  differs, so a class member's figure may differ from its own loop's in the last bits). */
inline constexpr int all2all_every_rank_max = 1024;

/** @brief The largest EP group drawn routing (uniform, zipf, histogram) takes: it draws every token and prices every
 *  rank from sparse rows (models::RoutingRows), O(ep + ep x tokens per rank x top_k) in time and memory
 *  (docs/results.md: EP 16384 zipf+EPLB, 128 tokens a rank, in ~1.7-2.0 s of user CPU and 0.28 GB; EP 4096 in ~1 s
 *  and 0.16 GB); balanced routing runs up to parallel.ep's range in O(ep). */
inline constexpr int drawn_routing_ep_max = 16384;

/** @brief The most tokens drawn routing draws in one step (ep x tokens per rank): each token's top_k experts are
 *  drawn, ~0.55 us a token on one core (docs/results.md: EP 8 x 1,048,576 tokens in ~4.6 s of CPU, 43 MB; EP 16384 x
 *  1,024 tokens in ~16 s and 1.5 GB, the sparse rows growing with the pairs reached), so this bound is ~10-20 s. */
inline constexpr long drawn_routing_tokens_max = 1L << 24;

} // namespace dbosim::models

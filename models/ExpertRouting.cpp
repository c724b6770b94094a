#include "models/ExpertRouting.hpp"

#include "models/DistinctDraw.hpp"

#include <fmt/format.h>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

namespace dbosim::models {
namespace {

/*** Portable draws: std::mt19937_64's output sequence is fixed by the standard; the mapping to numbers is ours ***/

/** @brief An integer in [0, n) (n >= 1); the bias of floor(u·n) is below 2^-53·n, far under any statistic we use. */
int uniform_below(std::mt19937_64& g, int n) { return std::min(n - 1, static_cast<int>(uniform01(g) * n)); }

/** @brief A generator per (seed, stream): SplitMix64-style mixing so that nearby seeds and streams are unrelated. */
std::mt19937_64 make_rng(std::uint64_t seed, std::uint64_t stream)
{
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + stream + 0xD1B54A32D192ED03ULL;
  z               = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z               = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return std::mt19937_64(z ^ (z >> 31));
}

} // namespace

std::string routing_dist_name(RoutingDist d)
{
  switch (d) {
  case RoutingDist::balanced:
    return "balanced";
  case RoutingDist::uniform:
    return "uniform";
  case RoutingDist::zipf:
    return "zipf";
  case RoutingDist::histogram:
    return "histogram";
  }
  return "?";
}

std::string placement_name(Placement p) { return p == Placement::contiguous ? "contiguous" : "eplb"; }

std::vector<double> expert_popularity(const RoutingSpec& spec, int num_experts)
{
  std::vector<double> w(num_experts, 1.0);
  if (spec.dist == RoutingDist::zipf) {
    // Popularity rank -> expert id through a seed-drawn permutation (Fisher-Yates), so hot experts are spread over
    // ranks as a trained router's would be, not all on rank 0.
    std::vector<int> order(num_experts);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 g = make_rng(spec.seed, 0xE0E0);
    for (int i = num_experts - 1; i > 0; --i)
      std::swap(order[i], order[uniform_below(g, i + 1)]);
    for (int r = 0; r < num_experts; ++r)
      w[order[r]] = 1.0 / std::pow(r + 1.0, spec.zipf_alpha);
  } else if (spec.dist == RoutingDist::histogram) {
    if (static_cast<int>(spec.histogram.size()) != num_experts)
      throw std::invalid_argument(
          fmt::format("routing histogram has {} weights for {} experts", spec.histogram.size(), num_experts));
    w = spec.histogram;
  }
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  if (!(total > 0) || !std::isfinite(total))
    throw std::invalid_argument("routing weights must be finite with a positive sum");
  for (double& x : w) {
    if (!(x >= 0))
      throw std::invalid_argument("routing weights must be >= 0");
    x /= total;
  }
  return w;
}

ExpertPlacement place_experts(const RoutingSpec& spec, int num_experts, int ep)
{
  if (ep < 1 || num_experts < 1)
    throw std::invalid_argument("place_experts: ep and num_experts must be >= 1");
  const int slots = num_experts + spec.redundant_experts;
  if (spec.redundant_experts < 0 || slots % ep != 0)
    throw std::invalid_argument(
        fmt::format("{} experts + {} redundant do not divide over ep={}", num_experts, spec.redundant_experts, ep));
  if (spec.placement == Placement::contiguous && spec.redundant_experts != 0)
    throw std::invalid_argument("redundant experts need placement eplb");
  const int per_rank = slots / ep;
  ExpertPlacement p;
  p.replicas_rank.assign(num_experts, {});
  p.slots_per_rank.assign(ep, 0);
  if (spec.placement == Placement::contiguous) {
    for (int e = 0; e < num_experts; ++e)
      p.replicas_rank[e].push_back(e / per_rank);
    std::fill(p.slots_per_rank.begin(), p.slots_per_rank.end(), per_rank);
    return p;
  }
  // EPLB (DeepSeek eplb.py, greedy form): give each extra slot to the expert with the highest load per replica, then
  // pack replicas heaviest first onto the least-loaded rank with a free slot (not one already holding that expert).
  const std::vector<double> load = expert_popularity(spec, num_experts);
  // The expert of highest load per replica, ties to the lowest id (a scan's first maximum): the top of a heap of
  // (load / count, expert), O(log experts) a slot where a scan of every expert made EP 16384 cost 4M divisions.
  std::vector<int> count(num_experts, 1);
  using Share      = std::pair<double, int>;
  auto lower_share = [](const Share& a, const Share& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  };
  std::priority_queue<Share, std::vector<Share>, decltype(lower_share)> shares(lower_share);
  for (int e = 0; e < num_experts; ++e)
    shares.emplace(load[e] / count[e], e);
  for (int i = 0; i < spec.redundant_experts; ++i) {
    const int best = shares.top().second;
    shares.pop();
    ++count[best];
    shares.emplace(load[best] / count[best], best);
  }
  std::vector<std::pair<double, int>> items; // (load per replica, expert)
  for (int e = 0; e < num_experts; ++e)
    for (int c = 0; c < count[e]; ++c)
      items.emplace_back(load[e] / count[e], e);
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  // The least-loaded rank with a free slot, ties to the lowest index: the first entry of an ordered set of
  // (load, rank) over the ranks with a free slot, skipping the few that already hold the expert (O(log ep) a replica,
  // where a scan of every rank made EP 65536 quadratic).
  std::vector<double> rank_load(ep, 0.0);
  std::set<std::pair<double, int>> open;
  for (int r = 0; r < ep; ++r)
    open.emplace(0.0, r);
  for (const auto& [l, e] : items) {
    const auto& reps = p.replicas_rank[e];
    auto it          = open.begin();
    while (it != open.end() && std::find(reps.begin(), reps.end(), it->second) != reps.end())
      ++it;
    if (it == open.end()) // every rank with a free slot holds the expert: it may hold two replicas
      it = open.begin();
    const int best = it->second;
    open.erase(it);
    p.replicas_rank[e].push_back(best);
    ++p.slots_per_rank[best];
    rank_load[best] += l;
    if (p.slots_per_rank[best] < per_rank)
      open.emplace(rank_load[best], best);
  }
  return p;
}

std::shared_ptr<const ExpertPlacement> balanced_placement(Placement placement, int redundant_experts, int num_experts,
                                                          int ep)
{
  using Key                          = std::tuple<Placement, int, int, int>;
  constexpr std::size_t kept_at_most = 8; // a sweep's workers price one deployment at a time
  thread_local std::map<Key, std::shared_ptr<const ExpertPlacement>> kept;
  const Key key{placement, redundant_experts, num_experts, ep};
  if (auto at = kept.find(key); at != kept.end())
    return at->second;
  RoutingSpec spec;
  spec.dist              = RoutingDist::balanced;
  spec.placement         = placement;
  spec.redundant_experts = redundant_experts;
  auto p                 = std::make_shared<const ExpertPlacement>(place_experts(spec, num_experts, ep));
  if (kept.size() >= kept_at_most)
    kept.clear();
  kept.emplace(key, p);
  return p;
}

std::string routing_infeasibility(const RoutingSpec& spec, int num_experts, int top_k)
{
  std::vector<double> pop;
  try {
    pop = expert_popularity(spec, num_experts);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const int nonzero = static_cast<int>(std::count_if(pop.begin(), pop.end(), [](double x) { return x > 0; }));
  if (nonzero < top_k)
    return fmt::format("only {} experts have a non-zero weight; top_k is {}", nonzero, top_k);
  if (spec.dist == RoutingDist::balanced || spec.groups <= 0 || spec.topk_groups <= 0)
    return "";
  const int group_size = num_experts / spec.groups;
  if (num_experts % spec.groups != 0 || spec.topk_groups > spec.groups || spec.topk_groups * group_size < top_k)
    return fmt::format("group-limited routing: {} experts in {} groups, top {} groups, top_k {}", num_experts,
                       spec.groups, spec.topk_groups, top_k);
  // A token may draw any topk_groups of the groups holding weight, so the draw is possible for every token only if
  // there are that many such groups and the topk_groups of them with the fewest weighted experts still hold top_k.
  std::vector<std::pair<int, int>> weighted; // (experts with weight, group) over groups holding weight
  for (int gr = 0; gr < spec.groups; ++gr) {
    const int n = static_cast<int>(std::count_if(pop.begin() + gr * group_size, pop.begin() + (gr + 1) * group_size,
                                                 [](double x) { return x > 0; }));
    if (n > 0)
      weighted.emplace_back(n, gr);
  }
  auto names = [](const std::vector<std::pair<int, int>>& v, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n && i < v.size(); ++i)
      out += fmt::format("{}{}", i ? ", " : "", v[i].second);
    return out;
  };
  if (static_cast<int>(weighted.size()) < spec.topk_groups)
    return fmt::format("weight only in group{} {} of {}, but each token draws routing_topk_groups {} distinct groups",
                       weighted.size() == 1 ? "" : "s", names(weighted, weighted.size()), spec.groups,
                       spec.topk_groups);
  std::stable_sort(weighted.begin(), weighted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  int fewest = 0;
  for (int i = 0; i < spec.topk_groups; ++i)
    fewest += weighted[i].first;
  if (fewest < top_k)
    return fmt::format("groups {} hold only {} experts with weight between them, fewer than top_k {} (a token may "
                       "draw exactly these routing_topk_groups {} groups)",
                       names(weighted, spec.topk_groups), fewest, top_k, spec.topk_groups);
  return "";
}

namespace {

/** @brief The arguments route_tokens and route_balanced_rows share, checked; the popularity of each expert. */
std::vector<double> checked_popularity(const RoutingSpec& spec, int num_experts, int top_k, int gpus_per_node,
                                       int tokens)
{
  if (top_k < 1 || top_k > num_experts || gpus_per_node < 1 || tokens < 0)
    throw std::invalid_argument("route_tokens: bad top_k, gpus_per_node or tokens");
  std::vector<double> pop = expert_popularity(spec, num_experts);
  if (const std::string why = routing_infeasibility(spec, num_experts, top_k); !why.empty())
    throw std::invalid_argument(why);
  return pop;
}

/** @brief Expected-value routing as the one row every source rank sends (checked arguments). */
RoutingMatrix balanced_row(const RoutingSpec& spec, const ExpertPlacement& placement, const std::vector<double>& pop,
                           int num_experts, int top_k, int ep, int gpus_per_node, int tokens)
{
  const int nodes = (ep + gpus_per_node - 1) / gpus_per_node;
  RoutingMatrix m;
  m.ep = ep;
  // Expected values: a copy lands on rank d with probability frac[d]; a token reaches d (or node n) at least once
  // with probability 1 - (1 - frac)^top_k (the top_k picks treated as independent).
  std::vector<double> frac(ep, 0.0), node_frac(nodes, 0.0);
  for (int e = 0; e < num_experts; ++e)
    for (int r : placement.replicas_rank[e])
      frac[r] += pop[e] / static_cast<double>(placement.replicas_rank[e].size());
  if (spec.hot_rank_load != 1.0 && ep > 1) {
    const auto hot     = static_cast<std::size_t>(std::max_element(frac.begin(), frac.end()) - frac.begin());
    const double share = std::clamp(spec.hot_rank_load / ep, frac[hot], 1.0);
    const double rest  = frac[hot] < 1.0 ? (1.0 - share) / (1.0 - frac[hot]) : 0.0;
    for (std::size_t d = 0; d < frac.size(); ++d)
      frac[d] = d == hot ? share : frac[d] * rest;
  }
  for (int d = 0; d < ep; ++d)
    node_frac[d / gpus_per_node] += frac[d];
  m.copies.assign(1, std::vector<double>(ep));
  m.rank_dedup.assign(1, std::vector<double>(ep));
  m.node_dedup.assign(1, std::vector<double>(nodes));
  m.expert_rows.assign(ep, 0.0);
  m.active_experts.assign(ep, 0);
  for (int d = 0; d < ep; ++d) {
    m.copies[0][d]      = tokens * top_k * frac[d];
    m.rank_dedup[0][d]  = tokens * (1.0 - std::pow(1.0 - frac[d], top_k));
    m.expert_rows[d]    = ep * tokens * top_k * frac[d];
    m.active_experts[d] = placement.slots_per_rank[d];
  }
  for (int n = 0; n < nodes; ++n)
    m.node_dedup[0][n] = tokens * (1.0 - std::pow(1.0 - node_frac[n], top_k));
  return m;
}

} // namespace

RoutingMatrix route_balanced_rows(const RoutingSpec& spec, const ExpertPlacement& placement, int num_experts, int top_k,
                                  int ep, int gpus_per_node, int tokens)
{
  if (spec.dist != RoutingDist::balanced)
    throw std::invalid_argument("route_balanced_rows: only balanced routing sends one row from every rank");
  const std::vector<double> pop = checked_popularity(spec, num_experts, top_k, gpus_per_node, tokens);
  return balanced_row(spec, placement, pop, num_experts, top_k, ep, gpus_per_node, tokens);
}

RoutingMatrix route_tokens(const RoutingSpec& spec, const ExpertPlacement& placement, int num_experts, int top_k,
                           int ep, int gpus_per_node, int tokens, std::uint64_t stream)
{
  const std::vector<double> pop = checked_popularity(spec, num_experts, top_k, gpus_per_node, tokens);
  if (spec.dist == RoutingDist::balanced) { // the one row, copied to every source rank
    RoutingMatrix m = balanced_row(spec, placement, pop, num_experts, top_k, ep, gpus_per_node, tokens);
    m.copies.assign(ep, std::vector<double>(m.copies[0]));
    m.rank_dedup.assign(ep, std::vector<double>(m.rank_dedup[0]));
    m.node_dedup.assign(ep, std::vector<double>(m.node_dedup[0]));
    return m;
  }
  return routing_matrix(route_token_rows(spec, placement, num_experts, top_k, ep, gpus_per_node, tokens, stream));
}

namespace {

/** @brief Asks the kernel to back `v`'s reserved buffer with transparent huge pages (Linux, where THP is in madvise
 *  mode): a large draw writes its rows once, page after page, and a 4 KiB page costs a fault and a TLB entry each
 *  (EP 16384: ~25% less CPU). A hint: nothing else changes, and nothing when it is refused. */
template <class T> void prefer_huge_pages(const std::vector<T>& v)
{
#ifdef __linux__
  constexpr std::uintptr_t page = 4096, huge = std::uintptr_t{2} << 20;
  const auto first           = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t begin = (first + page - 1) & ~(page - 1);
  const std::uintptr_t end   = (first + v.capacity() * sizeof(T)) & ~(page - 1);
  if (end > begin && end - begin >= 2 * huge)
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)v;
#endif
}

/** @brief One source rank's row as it is drawn (dense scratch with a bitmap of the entries touched), appended to
 *  RoutingRows in ascending destination order when the source's tokens are done. */
class RowScratch {
public:
  RowScratch(int ep, int nodes)
      : copies_(ep, 0.0), rank_dedup_(ep, 0.0), node_dedup_(nodes, 0.0), rank_seen_(words(ep), 0),
        node_seen_(words(nodes), 0)
  {
  }

  /** @brief One copy to rank d on node n; `new_rank`/`new_node`: the token's first copy there. */
  void add(int d, int n, bool new_rank, bool new_node)
  {
    mark(rank_seen_, d);
    copies_[d] += 1;
    if (new_rank)
      rank_dedup_[d] += 1;
    if (new_node) {
      mark(node_seen_, n);
      node_dedup_[n] += 1;
    }
  }

  /** @brief Appends row `s` to `rr` and clears the scratch. */
  void flush(RoutingRows& rr)
  {
    drain(rank_seen_, [&](int d) {
      rr.dst.push_back(d);
      rr.copies.push_back(copies_[d]);
      rr.rank_dedup.push_back(rank_dedup_[d]);
      copies_[d] = rank_dedup_[d] = 0.0;
    });
    drain(node_seen_, [&](int n) {
      rr.node_dst.push_back(n);
      rr.node_dedup.push_back(node_dedup_[n]);
      node_dedup_[n] = 0.0;
    });
    rr.row_begin.push_back(rr.dst.size());
    rr.node_row_begin.push_back(rr.node_dst.size());
  }

private:
  static std::size_t words(int n) { return (static_cast<std::size_t>(n) + 63) / 64; }
  static void mark(std::vector<std::uint64_t>& seen, int i)
  {
    seen[static_cast<std::size_t>(i) / 64] |= 1ULL << (i % 64);
  }
  /** Calls f on each marked index, ascending, and clears the marks. */
  template <class F> static void drain(std::vector<std::uint64_t>& seen, F&& f)
  {
    for (std::size_t w = 0; w < seen.size(); ++w)
      for (std::uint64_t bits = seen[w]; bits != 0; bits &= bits - 1)
        f(static_cast<int>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
    std::fill(seen.begin(), seen.end(), 0);
  }

  std::vector<double> copies_, rank_dedup_, node_dedup_;
  std::vector<std::uint64_t> rank_seen_, node_seen_;
};

} // namespace

RoutingRows route_token_rows(const RoutingSpec& spec, const ExpertPlacement& placement, int num_experts, int top_k,
                             int ep, int gpus_per_node, int tokens, std::uint64_t stream, RoutingRows reuse)
{
  if (spec.dist == RoutingDist::balanced)
    return routing_rows(route_tokens(spec, placement, num_experts, top_k, ep, gpus_per_node, tokens, stream));
  const std::vector<double> pop = checked_popularity(spec, num_experts, top_k, gpus_per_node, tokens);
  const int nodes               = (ep + gpus_per_node - 1) / gpus_per_node;
  RoutingRows m                 = std::move(reuse);
  m.ep                          = ep;
  m.nodes                       = nodes;
  m.one_row                     = false;
  m.row_begin.assign(1, 0);
  m.node_row_begin.assign(1, 0);
  // Each entry list emptied (its buffer kept), room for one entry per token-expert copy, backed by huge pages.
  const std::size_t most = static_cast<std::size_t>(ep) * static_cast<std::size_t>(tokens) * top_k;
  auto prepare           = [most](auto& entries) {
    entries.clear();
    entries.reserve(most);
    prefer_huge_pages(entries);
  };
  prepare(m.dst);
  prepare(m.copies);
  prepare(m.rank_dedup);
  prepare(m.node_dst);
  prepare(m.node_dedup);
  m.expert_rows.assign(ep, 0.0);
  m.active_experts.assign(ep, 0);

  std::vector<std::size_t> next_replica(num_experts, 0); // round-robin over an expert's replicas, per micro-batch
  std::vector<std::vector<long>> replica_rows(num_experts);
  for (int e = 0; e < num_experts; ++e)
    replica_rows[e].assign(placement.replicas_rank[e].size(), 0);
  std::mt19937_64 g    = make_rng(spec.seed, 0x1000 + stream);
  const bool grouped   = spec.groups > 0 && spec.topk_groups > 0;
  const int group_size = grouped ? num_experts / spec.groups : num_experts;
  DistinctDraw experts(pop);
  std::vector<double> group_weight(grouped ? spec.groups : 1, 0.0);
  for (int e = 0; e < num_experts; ++e)
    group_weight[e / group_size] += pop[e];
  DistinctDraw groups(group_weight);
  std::vector<unsigned char> in_chosen_groups(grouped ? num_experts : 0, 0);
  std::vector<int> chosen, chosen_groups;
  std::vector<int> rank_mark(ep, -1), node_mark(nodes, -1);
  RowScratch row(ep, nodes);
  for (int s = 0; s < ep; ++s) {
    for (int t = 0; t < tokens; ++t) {
      const int token_id = s * tokens + t;
      if (grouped) { // topk_groups distinct groups by group weight, then top_k distinct experts inside them
        groups.draw(spec.topk_groups, g, chosen_groups);
        std::fill(in_chosen_groups.begin(), in_chosen_groups.end(), 0);
        for (int gr : chosen_groups)
          std::fill_n(in_chosen_groups.begin() + gr * group_size, group_size, 1);
        experts.draw(top_k, g, chosen, &in_chosen_groups);
      } else {
        experts.draw(top_k, g, chosen);
      }
      for (int e : chosen) {
        const auto& reps    = placement.replicas_rank[e];
        const std::size_t k = next_replica[e];
        next_replica[e]     = k + 1 == reps.size() ? 0 : k + 1;
        const int d         = reps[k];
        const int n         = d / gpus_per_node;
        ++replica_rows[e][k];
        const bool new_rank = rank_mark[d] != token_id;
        const bool new_node = node_mark[n] != token_id;
        rank_mark[d]        = token_id;
        node_mark[n]        = token_id;
        row.add(d, n, new_rank, new_node);
      }
    }
    row.flush(m);
  }
  for (std::size_t i = 0; i < m.dst.size(); ++i) // column sums in source order
    m.expert_rows[m.dst[i]] += m.copies[i];
  for (int e = 0; e < num_experts; ++e)
    for (std::size_t k = 0; k < replica_rows[e].size(); ++k)
      if (replica_rows[e][k] > 0)
        ++m.active_experts[placement.replicas_rank[e][k]];
  return m;
}

RoutingRows routing_rows(RoutingMatrix rm)
{
  RoutingRows rr;
  rr.ep             = rm.ep;
  rr.expert_rows    = std::move(rm.expert_rows);
  rr.active_experts = std::move(rm.active_experts);
  if (rm.ep > 1 && rm.copies.size() == 1) {
    rr.one_row    = true;
    rr.nodes      = static_cast<int>(rm.node_dedup[0].size());
    rr.copies     = std::move(rm.copies[0]);
    rr.rank_dedup = std::move(rm.rank_dedup[0]);
    rr.node_dedup = std::move(rm.node_dedup[0]);
    return rr;
  }
  rr.nodes = rm.node_dedup.empty() ? 0 : static_cast<int>(rm.node_dedup[0].size());
  rr.row_begin.assign(1, 0);
  rr.node_row_begin.assign(1, 0);
  for (int s = 0; s < rm.ep; ++s) {
    for (int d = 0; d < rm.ep; ++d)
      if (rm.copies[s][d] != 0 || rm.rank_dedup[s][d] != 0) {
        rr.dst.push_back(d);
        rr.copies.push_back(rm.copies[s][d]);
        rr.rank_dedup.push_back(rm.rank_dedup[s][d]);
      }
    for (int n = 0; n < rr.nodes; ++n) { // every node entry, zeros too: a node entry for every rank entry
      rr.node_dst.push_back(n);
      rr.node_dedup.push_back(rm.node_dedup[s][n]);
    }
    rr.row_begin.push_back(rr.dst.size());
    rr.node_row_begin.push_back(rr.node_dst.size());
  }
  return rr;
}

RoutingMatrix routing_matrix(const RoutingRows& rr)
{
  RoutingMatrix m;
  m.ep             = rr.ep;
  m.expert_rows    = rr.expert_rows;
  m.active_experts = rr.active_experts;
  const int rows   = rr.one_row ? 1 : rr.ep;
  m.copies.assign(rows, std::vector<double>(rr.ep, 0.0));
  m.rank_dedup.assign(rows, std::vector<double>(rr.ep, 0.0));
  m.node_dedup.assign(rows, std::vector<double>(rr.nodes, 0.0));
  for (int s = 0; s < rows; ++s) {
    for_each_in_row(rr, s, [&](int d, double copies, double rank_dedup) {
      m.copies[s][d]     = copies;
      m.rank_dedup[s][d] = rank_dedup;
    });
    for_each_node_in_row(rr, s, [&](int n, double node_dedup) { m.node_dedup[s][n] = node_dedup; });
  }
  return m;
}

} // namespace dbosim::models

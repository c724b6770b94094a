#include "models/All2AllModel.hpp"

#include "hw/DType.hpp"
#include "models/BalancedRouting.hpp"
#include "models/CommOps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace dbosim::models {
namespace {

/*** Shared pieces ***/

struct Layout {
  int ep;
  int gpn; ///< GPUs per NVLink domain
  int node(int r) const { return r / gpn; }
  int nodes() const { return (ep + gpn - 1) / gpn; }
};

void check(const All2AllContext& ctx, OpKind kind)
{
  if (kind != OpKind::D && kind != OpKind::C)
    throw std::invalid_argument("all-to-all: kind must be D or C");
  if (!ctx.model || !ctx.hw || !ctx.net)
    throw std::invalid_argument("all-to-all: model, profile and network facts are required");
  if (!(ctx.net->nvlink_achievable_bytes_per_s > 0) || !(ctx.net->nic_achievable_bytes_per_s > 0))
    throw std::invalid_argument(fmt::format("network facts '{}' lack NVLink or NIC bandwidth", ctx.net->name));
  if (ctx.gpus_per_node < 1)
    throw std::invalid_argument("all-to-all: gpus_per_node must be >= 1");
  if (ctx.net->scale_up_topology == ScaleUpTopology::full_mesh &&
      (!(ctx.net->mesh_link_achievable_bytes_per_s > 0) || ctx.gpus_per_node - 1 > ctx.net->mesh_links_per_gpu))
    throw std::invalid_argument(fmt::format("network facts '{}': a full mesh of {} links per GPU cannot join {} GPUs",
                                            ctx.net->name, ctx.net->mesh_links_per_gpu, ctx.gpus_per_node));
}

double copy_bytes(OpKind kind, const ModelSpec& m)
{
  return kind == OpKind::D ? dispatch_bytes_per_copy(m) : combine_bytes_per_copy(m);
}

/** @brief Bytes of one token in a DeepEP high-throughput buffer slot (deep_ep csrc/kernels/legacy/internode.cu
 *  get_num_bytes_per_token): the payload with its FP8 scales, an 8-byte SourceMeta, the top-k indices (dispatch) and
 *  top-k weights (int32/fp32 each), rounded up to 16 bytes. Both the NVLink and the RDMA stage move whole slots. */
double ht_slot_bytes(OpKind kind, const ModelSpec& m)
{
  constexpr double source_meta_bytes = 8, topk_entry_bytes = 4, align_bytes = 16;
  const double topk = (kind == OpKind::D ? 2.0 : 1.0) * m.top_k * topk_entry_bytes;
  return std::ceil((copy_bytes(kind, m) + source_meta_bytes + topk) / align_bytes) * align_bytes;
}

/** @brief One-way latency of an RDMA write across the rail-optimised fat tree: the NIC, then one leaf switch when
 *  every node sits under the same leaf (a rail group), else leaf-spine-leaf. */
double rdma_latency_us(const Layout& l, const All2AllContext& ctx)
{
  const int down = std::max(1, ctx.net->leaf_switch_down_ports);
  const int hops = l.nodes() <= down ? 1 : 3;
  return ctx.hw->nic_latency_us + hops * ctx.net->switch_latency_us;
}

/** @brief Whether traffic from rank a to rank b (on other nodes) climbs to the spine: another rail, or a node under
 *  another leaf (leaf_switch_down_ports nodes per rail leaf). */
bool via_spine(const Layout& l, const All2AllContext& ctx, int a, int b)
{
  const int down = std::max(1, ctx.net->leaf_switch_down_ports);
  return a % l.gpn != b % l.gpn || l.node(a) / down != l.node(b) / down;
}

/** @brief Each rank's node, rail and leaf switch, looked up where a walk over every entry would divide: same_node
 *  and via_spine answer as l.node and ::via_spine do. */
struct Places {
  std::vector<int> node, rail, leaf;
  Places(const Layout& l, const All2AllContext& ctx)
      : node(static_cast<std::size_t>(l.ep)), rail(node.size()), leaf(node.size())
  {
    const int down = std::max(1, ctx.net->leaf_switch_down_ports);
    for (int r = 0; r < l.ep; ++r) {
      node[r] = l.node(r);
      rail[r] = r % l.gpn;
      leaf[r] = node[r] / down;
    }
  }
  bool same_node(int a, int b) const { return node[a] == node[b]; }
  bool via_spine(int a, int b) const { return rail[a] != rail[b] || leaf[a] != leaf[b]; }
};

/** @brief RDMA time: the NIC at its rate, and the spine share at nic / oversubscription. */
double rdma_us(double bytes, double spine_bytes, double nic_bw, const All2AllContext& ctx)
{
  return std::max(bytes / nic_bw, spine_bytes / (nic_bw / std::max(1.0, ctx.oversubscription))) * 1e6;
}

/** @brief An SM-resident kernel's NVLink bandwidth: the achievable link rate, bounded by what its SMs can copy
 *  (the profile's comm_kernel curve, when it has one). */
double sm_bounded_nvlink(const All2AllContext& ctx)
{
  double bw      = ctx.net->nvlink_achievable_bytes_per_s;
  const Curve& c = ctx.hw->comm_kernel_bytes_per_s_by_sms;
  if (ctx.comm_sms > 0 && !c.empty()) {
    const double x = std::clamp(static_cast<double>(ctx.comm_sms), c.x.front(), c.x.back());
    std::size_t i  = 1;
    while (i + 1 < c.x.size() && c.x[i] < x)
      ++i;
    const double y =
        c.x.size() == 1 ? c.y[0] : c.y[i - 1] + (c.y[i] - c.y[i - 1]) * (x - c.x[i - 1]) / (c.x[i] - c.x[i - 1]);
    bw = std::min(bw, y);
  }
  return bw;
}

/** @brief Rank r's internode traffic when a collective goes by rail (DeepEP normal, MoRI InterNodeV1): RDMA once per
 *  (token, remote node) to that node's same-rail GPU, the same count both ways (`spine`: the part of it through the
 *  spine), and what r forwards over its node's links of the copies its rail peers send into the node
 *  (`forward_to_self`: r's own slots counted too, as DeepEP's forwarder writes them through the same buffers). */
struct RailTraffic {
  double rdma_send = 0, rdma_recv = 0, spine = 0, forwarded = 0;
};
/** @brief rail_traffic of each rank in `priced` (by rank; the others left 0): one-row routing walks each priced rank's
 *  rail peers, sparse rows are walked once in source order, which meets each rank's terms in its own loop's order. */
std::vector<RailTraffic> rail_traffic(const RoutingRows& rm, const Layout& l, const All2AllContext& ctx,
                                      const std::vector<int>& priced, double b, bool forward_to_self)
{
  std::vector<RailTraffic> t(static_cast<std::size_t>(rm.ep));
  for (int r : priced)
    for_each_node_in_row(rm, r, [&](int node, double dedup) {
      if (node != l.node(r)) {
        t[r].rdma_send += dedup * b;
        if (via_spine(l, ctx, r, node * l.gpn + r % l.gpn))
          t[r].spine += dedup * b;
      }
    });
  // What rank r receives: from each rail peer s on another node, its node entry to r's node and its entries to the
  // ranks of r's node (the node's rank on s's rail is n * gpn + s % gpn).
  auto received  = [&](int r, double node_dedup) { t[r].rdma_recv += node_dedup * b; };
  auto forwarded = [&](int r, int d, double rank_dedup) {
    if (forward_to_self || d != r)
      t[r].forwarded += rank_dedup * b;
  };
  if (has_one_row(rm)) {
    for (int r : priced) {
      const int nr = l.node(r);
      for (int s = r % l.gpn; s < rm.ep; s += l.gpn)
        if (l.node(s) != nr) {
          received(r, rm.node_dedup[nr]);
          for (int d = nr * l.gpn; d < std::min(rm.ep, (nr + 1) * l.gpn); ++d)
            forwarded(r, d, rm.rank_dedup[d]);
        }
    }
    return t;
  }
  auto rail_rank = [&](int s, int node) { return node == l.node(s) ? rm.ep : node * l.gpn + s % l.gpn; };
  for (int s = 0; s < rm.ep; ++s) {
    for_each_node_in_row(rm, s, [&](int node, double dedup) {
      if (const int r = rail_rank(s, node); r < rm.ep)
        received(r, dedup);
    });
    for_each_in_row(rm, s, [&](int d, double, double rank_dedup) {
      if (const int r = rail_rank(s, l.node(d)); r < rm.ep)
        forwarded(r, d, rank_dedup);
    });
  }
  return t;
}

/** @brief On a full mesh, the time the busiest peer pair's link takes: each pair has one link, so a GPU reaches one
 *  peer at one link's rate however idle its other links are. 0 on a switch, where the GPU's port is the only bound. */
double mesh_pair_us(double pair_bytes, double message_bytes, const All2AllContext& ctx)
{
  const NetworkFacts& n = *ctx.net;
  if (n.scale_up_topology != ScaleUpTopology::full_mesh || !(pair_bytes > 0))
    return 0.0;
  return pair_bytes /
         (n.mesh_link_achievable_bytes_per_s *
          NetworkFacts::efficiency(message_bytes, n.nvlink_message_overhead_bytes)) *
         1e6;
}

/** @brief HBM pass on the receiving side: the copy out of the receive buffer (dispatch) or the weighted top-k
 *  reduction (combine), at the profile's streaming-kernel bandwidth. */
double hbm_us(double bytes, const HwProfile& hw)
{
  const double bw = hw.hbm_bytes_per_s * (hw.memory_efficiency > 0 ? hw.memory_efficiency : 1.0);
  return bw > 0 ? bytes / bw * 1e6 : 0.0;
}

/** @brief The ranks a model's loop prices, and the priced rank whose figures each rank takes (itself when priced).
 *  Every rank is priced, but for one-row routing above all2all_every_rank_max ranks: there a rank's figures are sums
 *  and maxima over the row, its node's entries, its rail's entries under its leaf switch and its leaf's node entries,
 *  so ranks alike in these multisets (and in their own entries) are alike, and one of each class is priced. */
struct PricedRanks {
  std::vector<int> priced;
  std::vector<int> source;
};
PricedRanks priced_ranks(const RoutingRows& rm, const Layout& l, const All2AllContext& ctx)
{
  PricedRanks pr;
  pr.source.resize(rm.ep);
  std::iota(pr.source.begin(), pr.source.end(), 0);
  if (!has_one_row(rm) || rm.ep <= all2all_every_rank_max) {
    pr.priced = pr.source;
    return pr;
  }
  const std::vector<double>& v = rm.copies;
  const std::vector<double>& u = rm.rank_dedup;
  const std::vector<double>& w = rm.node_dedup;
  const int down               = std::max(1, ctx.net->leaf_switch_down_ports);
  const int leaves             = (l.nodes() + down - 1) / down;
  using Multiset               = std::vector<std::pair<double, double>>;
  std::map<Multiset, int> ids;
  auto intern = [&](Multiset ms) {
    std::sort(ms.begin(), ms.end());
    return ids.emplace(std::move(ms), static_cast<int>(ids.size())).first->second;
  };
  std::vector<Multiset> node_ms(l.nodes()), rail_leaf_ms(static_cast<std::size_t>(l.gpn) * leaves), leaf_ms(leaves);
  for (int p = 0; p < rm.ep; ++p) {
    node_ms[l.node(p)].emplace_back(v[p], u[p]);
    rail_leaf_ms[static_cast<std::size_t>(p % l.gpn) * leaves + l.node(p) / down].emplace_back(v[p], u[p]);
  }
  for (int n = 0; n < l.nodes(); ++n)
    leaf_ms[n / down].emplace_back(w[n], 0.0);
  std::vector<int> node_id(node_ms.size()), rail_leaf_id(rail_leaf_ms.size()), leaf_id(leaf_ms.size());
  for (std::size_t i = 0; i < node_ms.size(); ++i)
    node_id[i] = intern(std::move(node_ms[i]));
  for (std::size_t i = 0; i < rail_leaf_ms.size(); ++i)
    rail_leaf_id[i] = intern(std::move(rail_leaf_ms[i]));
  for (std::size_t i = 0; i < leaf_ms.size(); ++i)
    leaf_id[i] = intern(std::move(leaf_ms[i]));
  std::map<std::tuple<double, double, double, int, int, int, int>, int> class_rank;
  for (int r = 0; r < rm.ep; ++r) {
    const int rail         = r % l.gpn;
    const int leaf         = l.node(r) / down;
    const auto key         = std::make_tuple(v[r], u[r], w[l.node(r)], node_id[l.node(r)],
                                             rail_leaf_id[static_cast<std::size_t>(rail) * leaves + leaf], leaf_id[leaf],
                                             (rm.ep - rail + l.gpn - 1) / l.gpn);
    const auto [it, fresh] = class_rank.emplace(key, r);
    if (fresh)
      pr.priced.push_back(r);
    pr.source[r] = it->second;
  }
  return pr;
}

/** @brief Gives every unpriced rank its class's figures. */
void copy_classes(const PricedRanks& pr, std::vector<RankComm>& out)
{
  for (std::size_t r = 0; r < out.size(); ++r)
    if (pr.source[r] != static_cast<int>(r))
      out[r] = out[pr.source[r]];
}

/** @brief Calls row(r, p, copies, rank_dedup) for each entry of rank r's row (what r sends in dispatch) and
 *  column(r, p, copies, rank_dedup) for each entry of its column (what peer p sends r), for every priced rank r,
 *  each rank's calls of either kind in ascending peer order as its own loop over peers would make them, zeros left
 *  out. Sparse rows (every rank priced) are walked once in source order. */
template <class Row, class Column>
void visit_entries(const RoutingRows& rm, const PricedRanks& pr, Row&& row, Column&& column)
{
  if (has_one_row(rm)) {
    for (int r : pr.priced) {
      for_each_in_row(rm, r, [&](int p, double copies, double rank_dedup) { row(r, p, copies, rank_dedup); });
      for (int p = 0; p < rm.ep; ++p)
        column(r, p, rm.copies[r], rm.rank_dedup[r]);
    }
    return;
  }
  for (int s = 0; s < rm.ep; ++s)
    for_each_in_row(rm, s, [&](int d, double copies, double rank_dedup) {
      row(s, d, copies, rank_dedup);
      column(d, s, copies, rank_dedup);
    });
}

/*** DeepEP low-latency: one message per token-expert copy, RDMA (IBGDA) between nodes, NVLink inside one ***/

/** @brief One direction of a rank's traffic with its peers, summed in peer order: all of it (the rank itself
 *  included), over NVLink (its node's other ranks), over RDMA (other nodes) and the RDMA part through the spine. */
struct LinkBytes {
  double all = 0, nvl = 0, rdma = 0, spine = 0;
  /** Adds `bytes` between rank r and peer p; the busiest same-node pair's bytes go into `pair`. */
  void add(const Places& at, int r, int p, double bytes, double& pair)
  {
    all += bytes;
    if (p == r)
      return;
    if (at.same_node(p, r)) {
      pair = std::max(pair, bytes);
      nvl += bytes;
    } else {
      rdma += bytes;
      if (at.via_spine(r, p))
        spine += bytes;
    }
  }
};

std::vector<RankComm> deepep_ll(OpKind kind, const RoutingRows& rm, const All2AllContext& ctx)
{
  check(ctx, kind);
  const Layout l{rm.ep, ctx.gpus_per_node};
  const bool tr         = kind == OpKind::C; // combine: the copies go back
  const double b        = copy_bytes(kind, *ctx.model);
  const NetworkFacts& n = *ctx.net;
  const double nvl_bw = n.nvlink_achievable_bytes_per_s * NetworkFacts::efficiency(b, n.nvlink_message_overhead_bytes);
  const double nic_bw = n.nic_achievable_bytes_per_s * NetworkFacts::efficiency(b, n.nic_message_overhead_bytes);
  const double rdma_lat = rdma_latency_us(l, ctx);
  std::vector<RankComm> out(rm.ep);
  const PricedRanks pr = priced_ranks(rm, l, ctx);
  struct Sums {
    double home_tokens_x_k = 0, pair = 0;
    LinkBytes sent, recv;
  };
  std::vector<Sums> sums(static_cast<std::size_t>(rm.ep));
  const Places places(l, ctx);
  // Row r holds what r sends in dispatch (what it receives in combine), column r the other way.
  visit_entries(
      rm, pr,
      [&](int r, int p, double copies, double) {
        Sums& a = sums[r];
        a.home_tokens_x_k += copies;
        (tr ? a.recv : a.sent).add(places, r, p, copies * b, a.pair);
      },
      [&](int r, int p, double copies, double) {
        Sums& a = sums[r];
        (tr ? a.sent : a.recv).add(places, r, p, copies * b, a.pair);
      });
  for (int r : pr.priced) {
    const Sums& a                = sums[r];
    const double home_tokens_x_k = a.home_tokens_x_k, pair = a.pair;
    const double snvl = a.sent.nvl, srdma = a.sent.rdma, sspine = a.sent.spine;
    const double rnvl = a.recv.nvl, rrdma = a.recv.rdma, rspine = a.recv.spine, rall = a.recv.all;
    RankComm& c         = out[r];
    c.nvlink_bytes      = std::max(snvl, rnvl);
    c.rdma_bytes        = std::max(srdma, rrdma);
    const double t_nvl  = std::max(c.nvlink_bytes / nvl_bw * 1e6, mesh_pair_us(pair, b, ctx));
    const double t_rdma = rdma_us(c.rdma_bytes, std::max(sspine, rspine), nic_bw, ctx);
    // Data, then the per-expert count behind a fence: two one-way latencies of the farthest link used.
    const double lat = 2 * (c.rdma_bytes > 0 ? rdma_lat : ctx.hw->nvlink_latency_us);
    // Receive side: dispatch copies its arrivals into the packed layout (read + write); combine reads the copies
    // and writes one BF16 row per home token.
    const double tokens  = home_tokens_x_k / ctx.model->top_k;
    const double pass    = tr ? rall + tokens * combine_bytes_per_copy(*ctx.model) : 2 * rall;
    const double pass_us = hbm_us(pass, *ctx.hw);
    // The receive kernel (a hook under DBO, on the compute stream): its pass plus its part of the call's fixed cost.
    c.recv_us        = pass_us + (tr ? n.deepep_ll_combine_recv_fixed_us : n.deepep_ll_dispatch_recv_fixed_us);
    c.duration_us    = n.deepep_call_fixed_us + lat + pass_us + std::max(t_nvl, t_rdma);
    c.reported_bytes = home_tokens_x_k * b; // DeepEP test_low_latency: num_tokens x topk x bytes per copy
    c.bottleneck =
        t_rdma >= t_nvl ? (c.rdma_bytes > 0 ? CommBottleneck::rdma : CommBottleneck::latency) : CommBottleneck::nvlink;
  }
  copy_classes(pr, out);
  return out;
}

/*** DeepEP high-throughput: chunked, one copy per (token, rank); internode via the same-rail GPU then NVLink ***/

std::vector<RankComm> deepep_ht(OpKind kind, const RoutingRows& rm, const All2AllContext& ctx)
{
  check(ctx, kind);
  const Layout l{rm.ep, ctx.gpus_per_node};
  const bool tr         = kind == OpKind::C;
  const bool dispatch   = kind == OpKind::D;
  const double b        = ht_slot_bytes(kind, *ctx.model); // what crosses the links per token
  const double rb       = copy_bytes(kind, *ctx.model);    // what DeepEP's benchmark counts per token
  const NetworkFacts& n = *ctx.net;
  // One message (and one tail-flag update) per chunk: DeepEP's chunk size for this EP size sets the message size.
  const double nvl_bw = sm_bounded_nvlink(ctx) * NetworkFacts::efficiency(b * n.ht_chunk_tokens(rm.ep, dispatch, true),
                                                                          n.nvlink_message_overhead_bytes);
  const double nic_bw =
      n.nic_achievable_bytes_per_s *
      NetworkFacts::efficiency(b * n.ht_chunk_tokens(rm.ep, dispatch, false), n.nic_message_overhead_bytes);
  const bool internode = l.nodes() > 1;
  const double lat     = 2 * ctx.hw->nvlink_latency_us + (internode ? 2 * rdma_latency_us(l, ctx) : 0.0);
  std::vector<RankComm> out(rm.ep);
  const PricedRanks pr = priced_ranks(rm, l, ctx);
  struct Sums {
    double nvl_send = 0, nvl_recv = 0, recv_all = 0, pair = 0;
  };
  std::vector<Sums> sums(static_cast<std::size_t>(rm.ep));
  // The NVLink stage counts the rank's copies to itself: DeepEP's senders (intranode) and forwarders (internode)
  // write their own rank's slots through the same warps and channel buffers as a peer's, and DeepEP's NVL figure
  // (test_intranode/test_internode: the whole received tensor) counts them.
  auto sent_to = [&](int r, int p, double rank_dedup) {
    if (l.node(p) == l.node(r)) { // direct NVLink inside the node
      sums[r].nvl_send += rank_dedup * b;
      if (p != r) // the rank's own slots stay on the GPU: no link carries them
        sums[r].pair = std::max(sums[r].pair, rank_dedup * b);
    }
  };
  auto received_from = [&](int r, int p, double rank_dedup) {
    sums[r].recv_all += rank_dedup * rb;
    if (l.node(p) == l.node(r)) {
      sums[r].nvl_recv += rank_dedup * b;
      if (p != r)
        sums[r].pair = std::max(sums[r].pair, rank_dedup * b);
    }
  };
  // Row r holds what r sends in dispatch (what it receives in combine), column r the other way.
  visit_entries(
      rm, pr, [&](int r, int p, double, double u) { tr ? received_from(r, p, u) : sent_to(r, p, u); },
      [&](int r, int p, double, double u) { tr ? sent_to(r, p, u) : received_from(r, p, u); });
  // DeepEP's forwarder writes its own rank's slots through the same channel buffers as a peer's.
  const std::vector<RailTraffic> rails =
      internode ? rail_traffic(rm, l, ctx, pr.priced, b, /*forward_to_self=*/true) : std::vector<RailTraffic>{};
  for (int r : pr.priced) {
    double nvl_send = sums[r].nvl_send, nvl_recv = sums[r].nvl_recv, rdma_send = 0, rdma_recv = 0, spine = 0;
    const double recv_all = sums[r].recv_all, pair = sums[r].pair;
    if (internode) {
      const RailTraffic& rt = rails[r];
      rdma_send             = rt.rdma_send;
      rdma_recv             = rt.rdma_recv;
      spine                 = rt.spine;
      nvl_send += rt.forwarded;
      nvl_recv = std::max(nvl_recv, nvl_send); // symmetric fan-in from the node's rail receivers
    }
    RankComm& c    = out[r];
    c.nvlink_bytes = std::max(nvl_send, nvl_recv);
    c.rdma_bytes   = std::max(rdma_send, rdma_recv);
    const double t_nvl =
        std::max(c.nvlink_bytes / nvl_bw * 1e6, mesh_pair_us(pair, b * n.ht_chunk_tokens(rm.ep, dispatch, true), ctx));
    const double t_rdma = rdma_us(c.rdma_bytes, spine, nic_bw, ctx);
    // The NVLink forwarding is pipelined behind the RDMA chunks; across nodes both stages run at the internode
    // kernels' share of their rate.
    const double stage_efficiency = internode ? n.deepep_ht_internode_efficiency : 1.0;
    c.duration_us                 = n.deepep_call_fixed_us + lat + std::max(t_nvl, t_rdma) / stage_efficiency;
    // DeepEP's tests divide by: intranode, the bytes received over NVLink (own copies included); internode, the
    // "RDMA send" bytes, counted as one copy per (token, node) over every node the token goes to, its own included
    // (test_internode.py: num_rdma_token_sent) — which is why that figure can exceed the NIC's rate.
    double all_nodes = 0;
    for_each_node_in_row(rm, r, [&](int, double dedup) { all_nodes += dedup * rb; });
    c.reported_bytes = internode ? all_nodes : recv_all;
    c.bottleneck     = t_rdma >= t_nvl ? CommBottleneck::rdma : CommBottleneck::nvlink;
  }
  copy_classes(pr, out);
  return out;
}

/*** NCCL all-gather before the experts and reduce-scatter after them (vLLM's allgather_reducescatter,
 *   vllm/distributed/device_communicators/all2all.py AgRsAll2AllManager: all_gatherv / reduce_scatterv; TensorRT-LLM's
 *   attention-DP MoE inside one NVLink domain, tensorrt_llm/_torch/modules/fused_moe.py): every rank receives every
 *   other rank's tokens, whichever experts they chose, and sends back the partial sums of all of them. NCCL's rings:
 *   NVLink inside a node, one ring per NIC rail across nodes ***/

/** @brief The tokens of each rank: its row of token-expert copies over top_k (every rank's the same under a
 *  one-row balanced matrix, computed once). */
std::vector<double> tokens_per_rank(const RoutingRows& rm, int top_k)
{
  auto row_tokens = [&](int p) {
    double copies = 0;
    for_each_in_row(rm, p, [&](int, double c, double) { copies += c; });
    return copies / top_k;
  };
  if (has_one_row(rm))
    return std::vector<double>(rm.ep, row_tokens(0));
  std::vector<double> tokens(rm.ep);
  for (int p = 0; p < rm.ep; ++p)
    tokens[p] = row_tokens(p);
  return tokens;
}

std::vector<RankComm> nccl_agrs(OpKind kind, const RoutingRows& rm, const All2AllContext& ctx)
{
  check(ctx, kind);
  const Layout l{rm.ep, ctx.gpus_per_node};
  const ModelSpec& m    = *ctx.model;
  const NetworkFacts& n = *ctx.net;
  // Dispatch gathers each token's row with its top-k expert ids and weights (int32, fp32); combine scatters every
  // token's partial sum over this rank's experts (the combine dtype) back to the token's rank.
  constexpr double topk_entry_bytes = 4;
  const double b =
      kind == OpKind::D ? dispatch_bytes_per_copy(m) + 2 * m.top_k * topk_entry_bytes : combine_bytes_per_copy(m);
  const std::vector<double> tokens = tokens_per_rank(rm, m.top_k);
  const double all_tokens          = std::accumulate(tokens.begin(), tokens.end(), 0.0);
  const bool internode             = l.nodes() > 1;
  // A ring of ep ranks takes ep - 1 steps, each as slow as its slowest hop.
  const double ring_latency_us = (rm.ep - 1) * (internode ? rdma_latency_us(l, ctx) : ctx.hw->nvlink_latency_us);
  std::vector<RankComm> out(rm.ep);
  for (int r = 0; r < rm.ep; ++r) {
    RankComm& c         = out[r];
    const double in     = (all_tokens - tokens[r]) * b; // a ring sends on as much as it receives
    c.nvlink_bytes      = in;
    c.rdma_bytes        = internode ? in / l.gpn : 0.0; // the rail rings share the node's NICs
    const double t_nvl  = in / n.nvlink_achievable_bytes_per_s * 1e6;
    const double t_rdma = internode ? rdma_us(c.rdma_bytes, 0.0, n.nic_achievable_bytes_per_s, ctx) : 0.0;
    c.duration_us       = ring_latency_us + std::max(t_nvl, t_rdma);
    c.reported_bytes    = all_tokens * b; // nccl-tests' size: the gathered (or reduced) buffer
    c.bottleneck        = t_rdma > t_nvl ? CommBottleneck::rdma : CommBottleneck::nvlink;
  }
  return out;
}

/*** MoRI-EP (ROCm/mori): inside a node the IntraNode kernels push one copy per (token, rank) over the links, combine
 *   pushes the expert outputs back and each rank then sums its tokens' copies out of HBM; between nodes InterNodeV1
 *   sends one copy per (token, node) by RDMA and forwards it over the links (ROCm/mori src/ops/dispatch_combine) ***/

std::vector<RankComm> mori_ep(OpKind kind, const RoutingRows& rm, const All2AllContext& ctx)
{
  check(ctx, kind);
  const NetworkFacts& n = *ctx.net;
  if (!n.mori.present)
    throw std::invalid_argument(fmt::format("network facts '{}' have no MoRI kernel facts (mori: call_fixed, "
                                            "dispatch_efficiency); the mori backend runs on ROCm fabrics",
                                            n.name));
  const Layout l{rm.ep, ctx.gpus_per_node};
  const bool tr       = kind == OpKind::C;
  const ModelSpec& m  = *ctx.model;
  const double topk_b = m.top_k * 4.0; // int32 ids or fp32 weights, one per top-k slot
  // What crosses a link per (token, rank): dispatch, the payload with its FP8 scales, the top-k ids and weights and
  // the source-token index; combine, the BF16 row and its top-k weights. MoRI's benchmark counts the bare payload.
  const double b       = copy_bytes(kind, m) + (tr ? topk_b : 2 * topk_b + 4);
  const double payload = double(m.hidden) * dtype_bytes(tr ? m.combine_dtype : m.dispatch_dtype);
  const double eff     = tr ? 1.0 : n.mori.dispatch_efficiency;
  const double nic_bw  = n.nic_achievable_bytes_per_s;
  const bool internode = l.nodes() > 1;
  const double lat     = internode ? 2 * rdma_latency_us(l, ctx) : 0.0;
  std::vector<RankComm> out(rm.ep);
  const PricedRanks pr = priced_ranks(rm, l, ctx);
  struct Sums {
    double send = 0, recv = 0, pair = 0, recv_tokens = 0, home_copies = 0, home_tokens_x_k = 0;
  };
  std::vector<Sums> sums(static_cast<std::size_t>(rm.ep));
  // Row r holds what r sends in dispatch (what it receives in combine), column r the other way; the rank's own
  // copies stay in its HBM.
  auto over_links = [&](int r, int p) { return l.node(p) == l.node(r) && p != r; };
  visit_entries(
      rm, pr,
      [&](int r, int p, double copies, double rank_dedup) {
        Sums& a = sums[r];
        a.home_copies += rank_dedup;
        a.home_tokens_x_k += copies;
        if (over_links(r, p)) {
          (tr ? a.recv : a.send) += rank_dedup * b;
          a.pair = std::max(a.pair, rank_dedup * b);
        }
      },
      [&](int r, int p, double, double rank_dedup) {
        Sums& a = sums[r];
        a.recv_tokens += rank_dedup; // MoRI's total_recv_num_token, for dispatch and combine alike
        if (over_links(r, p)) {
          (tr ? a.send : a.recv) += rank_dedup * b;
          a.pair = std::max(a.pair, rank_dedup * b);
        }
      });
  // forwarded over the links to the node's other destinations only
  const std::vector<RailTraffic> rails =
      internode ? rail_traffic(rm, l, ctx, pr.priced, b, /*forward_to_self=*/false) : std::vector<RailTraffic>{};
  for (int r : pr.priced) {
    double send = sums[r].send, recv = sums[r].recv, rdma_send = 0, rdma_recv = 0, spine = 0;
    const double pair = sums[r].pair, recv_tokens = sums[r].recv_tokens, home_copies = sums[r].home_copies;
    const double home_tokens_x_k = sums[r].home_tokens_x_k;
    if (internode) {
      const RailTraffic& rt = rails[r];
      rdma_send             = rt.rdma_send;
      rdma_recv             = rt.rdma_recv;
      spine                 = rt.spine;
      send += rt.forwarded;
      recv = std::max(recv, send);
    }
    RankComm& c    = out[r];
    c.nvlink_bytes = std::max(send, recv);
    c.rdma_bytes   = std::max(rdma_send, rdma_recv);
    // On a full mesh the busiest pair's link bounds the rank; on a switch its port does.
    const double t_link =
        std::max(c.nvlink_bytes / n.nvlink_achievable_bytes_per_s * 1e6, mesh_pair_us(pair, b, ctx)) / eff;
    const double t_rdma = c.rdma_bytes > 0 ? rdma_us(c.rdma_bytes, spine, nic_bw, ctx) / eff : 0.0;
    // Combine: after the barrier each rank sums, per home token, the copies its peers pushed into its HBM, and writes
    // one BF16 row.
    const double tokens  = home_tokens_x_k / m.top_k;
    const double pass_us = tr ? hbm_us((home_copies + tokens) * combine_bytes_per_copy(m), *ctx.hw) : 0.0;
    c.duration_us        = n.mori.call_fixed_us + lat + std::max(t_link, t_rdma) + pass_us;
    c.reported_bytes     = recv_tokens * payload; // MoRI bench_dispatch_combine: total_recv_num_token x hidden x bytes
    c.bottleneck =
        t_rdma >= t_link ? (c.rdma_bytes > 0 ? CommBottleneck::rdma : CommBottleneck::latency) : CommBottleneck::nvlink;
  }
  copy_classes(pr, out);
  return out;
}

} // namespace

const std::vector<All2AllEntry>& all2all_registry()
{
#define DBOSIM_ALL2ALL_ENTRY(name, model)                                                                              \
  All2AllEntry{#name, all2all_traits_of(All2AllBackend::name).doc, All2AllBackend::name, &model},
  static const std::vector<All2AllEntry> r = {DBOSIM_ALL2ALL_BACKENDS(DBOSIM_ALL2ALL_ENTRY)};
#undef DBOSIM_ALL2ALL_ENTRY
  return r;
}

const All2AllEntry& all2all_model(All2AllBackend backend)
{
  for (const All2AllEntry& e : all2all_registry())
    if (e.backend == backend)
      return e;
  throw std::invalid_argument("all-to-all: backend without a model");
}

std::vector<RankComm> all2all_per_rank(All2AllBackend backend, OpKind kind, const RoutingRows& rm,
                                       const All2AllContext& ctx)
{
  return all2all_model(backend).fn(kind, rm, ctx);
}

std::vector<RankComm> all2all_per_rank(All2AllBackend backend, OpKind kind, const RoutingMatrix& rm,
                                       const All2AllContext& ctx)
{
  return all2all_per_rank(backend, kind, routing_rows(rm), ctx);
}

double all2all_completion_us(const std::vector<RankComm>& ranks)
{
  double t = 0;
  for (const RankComm& c : ranks)
    t = std::max(t, c.duration_us);
  return t;
}

} // namespace dbosim::models

#include "sim/output/ClusterTrace.hpp"

#include "base/InputError.hpp"
#include "base/JsonStream.hpp"
#include "sim/output/TraceWriter.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace dbosim::sim {
namespace {

constexpr int landing_tid = 1;

double ns(double us) { return std::round(us * 1e3) / 1e3; }

/** The role a picked rank plays, for its process name ("" when it has none). */
std::string role_of(const TracedRanks& t, int r)
{
  std::vector<const char*> roles;
  if (r == t.slowest)
    roles.push_back("slowest");
  if (r == t.median)
    roles.push_back("median");
  if (r == t.fastest)
    roles.push_back("fastest");
  if (r == t.representative)
    roles.push_back("representative");
  return roles.empty() ? std::string() : fmt::format(", {}", fmt::join(roles, ", "));
}

/** One instant per collective (D, C), where its data has landed on every rank: the latest landing over the classes
 *  (they agree: a collective ends for every rank when its slowest rank's part does). */
void write_landings(JsonStream& js, const Schedule& sched, const ClusterTimeline& tl, int pid)
{
  const std::vector<Op>& g = sched.ops;
  js.begin_object();
  js.key("args").begin_object().key("name").value("collectives: D/C landed on every rank").end_object();
  js.key("name").value("process_name").key("ph").value("M").key("pid").value(pid).end_object();
  js.begin_object();
  js.key("args").begin_object().key("name").value("landings (every rank's data in)").end_object();
  js.key("name").value("thread_name").key("ph").value("M").key("pid").value(pid);
  js.key("tid").value(landing_tid).end_object();
  for (OpVertex v = 0; v < sched.num_ops(); ++v) {
    if (!is_comm_kind(g[v].kind))
      continue;
    double landed_us = 0;
    for (const Timeline& c : tl.classes)
      landed_us = std::max(landed_us, c.ops[v].done_us());
    js.begin_object();
    js.key("args").begin_object().key("layer").value(g[v].layer).key("ubatch").value(g[v].ubatch).end_object();
    js.key("cat").value("landing").key("name").value(op_kind_name(g[v].kind)).key("ph").value("i");
    js.key("pid").value(pid).key("s").value("t").key("tid").value(landing_tid).key("ts").value(ns(landed_us));
    js.end_object();
  }
}

} // namespace

TracedRanks pick_trace_ranks(const TraceSelection& sel, const ClusterPlan& plan, const ClusterMetrics& m,
                             int all_ranks_max)
{
  TracedRanks t;
  t.selection = sel;
  t.ep        = static_cast<int>(plan.ranks.size());
  t.straggler = sel.mode == TraceMode::none ? -1 : m.straggler;
  std::vector<int> every(static_cast<std::size_t>(t.ep));
  std::iota(every.begin(), every.end(), 0);
  switch (sel.mode) {
  case TraceMode::none:
    return t;
  case TraceMode::ranks:
    for (int r : sel.ranks)
      if (r < 0 || r >= t.ep)
        throw InputError("--trace", 0, 0, "", fmt::format("rank {} is outside the EP group of {} ranks", r, t.ep),
                         fmt::format("ranks in 0..{}", t.ep - 1));
    t.ranks = sel.ranks;
    break;
  case TraceMode::all:
    t.ranks = every;
    break;
  case TraceMode::automatic:
    if (t.ep <= all_ranks_max) {
      t.ranks = every;
      break;
    }
    // By own work, ties by rank; the slowest is ClusterMetrics' straggler (the most own work, the lowest rank on a
    // tie).
    std::stable_sort(every.begin(), every.end(),
                     [&](int a, int b) { return plan.ranks[a].own_work_us < plan.ranks[b].own_work_us; });
    t.slowest        = m.straggler;
    t.median         = every[(every.size() - 1) / 2];
    t.fastest        = every.front();
    t.ranks          = {t.slowest, t.median, t.fastest};
    t.representative = m.representative;
    if (std::find(t.ranks.begin(), t.ranks.end(), t.representative) == t.ranks.end())
      t.ranks.push_back(t.representative);
    else
      t.representative = -1;
    std::sort(t.ranks.begin(), t.ranks.end());
    t.ranks.erase(std::unique(t.ranks.begin(), t.ranks.end()), t.ranks.end());
    break;
  }
  t.landings = !t.every_rank();
  return t;
}

std::string traced_ranks_text(const TracedRanks& t)
{
  if (!t.written())
    return "none (--trace none)";
  if (t.every_rank())
    return fmt::format("all {} ranks", t.ep);
  std::string which;
  if (t.selection.mode == TraceMode::ranks) {
    which = "--trace " + trace_selection_name(t.selection);
  } else {
    which = fmt::format("slowest {}, median {}, fastest {}", t.slowest, t.median, t.fastest);
    if (t.representative >= 0)
      which += fmt::format(", representative {}", t.representative);
  }
  return fmt::format("{} of {} ranks ({}) + collective landings; --trace all for every rank", t.ranks.size(), t.ep,
                     which);
}

void write_cluster_trace(std::ostream& out, const Schedule& sched, const ClusterPlan& plan, const ClusterTimeline& tl,
                         const TracedRanks& t)
{
  JsonStream js(out);
  js.begin_object().key("displayTimeUnit").value("ns");
  js.key("otherData").begin_object();
  js.key("ep").value(t.ep);
  // The rank a one-rank view of the step shows (the plan report's timeline): the straggler, when traced. Keys in
  // nlohmann's (sorted) order: the stream writes the bytes its dump would.
  if (std::find(t.ranks.begin(), t.ranks.end(), t.straggler) != t.ranks.end())
    js.key("straggler_rank").value(t.straggler);
  js.key("trace").value(traced_ranks_text(t));
  js.key("trace_mode").value(trace_selection_name(t.selection));
  js.key("trace_ranks").begin_array();
  for (int r : t.ranks)
    js.value(r);
  js.end_array().end_object();
  js.key("traceEvents").begin_array();
  std::int64_t flow_ids = 0;
  for (int r : t.ranks) {
    const int c     = plan.ranks.at(static_cast<std::size_t>(r)).rank_class;
    const auto ci   = static_cast<std::size_t>(c);
    const auto name = fmt::format("rank {} (class {}{})", r, c, role_of(t, r));
    flow_ids += write_rank_events(js, sched, plan.classes.at(ci), tl.classes.at(ci), r, name, flow_ids);
  }
  if (t.landings)
    write_landings(js, sched, tl, t.ep);
  js.end_array().end_object();
  js.finish();
}

nlohmann::json cluster_trace(const Schedule& sched, const ClusterPlan& plan, const ClusterTimeline& tl)
{
  TraceSelection all;
  all.mode = TraceMode::all;
  std::ostringstream text;
  write_cluster_trace(text, sched, plan, tl, pick_trace_ranks(all, plan, ClusterMetrics{}));
  return nlohmann::json::parse(text.str());
}

} // namespace dbosim::sim

#include "sim/output/ClusterSummary.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dbosim::sim {

Spread spread_of(std::vector<double> v)
{
  if (v.empty())
    return {};
  std::sort(v.begin(), v.end());
  return {v.front(), v[(v.size() - 1) / 2], v.back()};
}

ClusterMetrics cluster_metrics(const ClusterPlan& plan, const ClusterTimeline& tl)
{
  ClusterMetrics m;
  // Each rank's step: its layers' timeline, then its work outside the layers (embedding, final norm, LM head,
  // sampler) on its own batch. The step is the last rank's end.
  m.classes = plan.num_classes();
  std::vector<double> step, rows, work;
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const RankLoad& l = plan.ranks[r];
    step.push_back(tl.classes[l.rank_class].step_time() +
                   plan.classes[static_cast<std::size_t>(l.rank_class)].step_work_us);
    rows.push_back(l.expert_rows);
    work.push_back(l.own_work_us);
    if (l.own_work_us > plan.ranks[m.straggler].own_work_us)
      m.straggler = static_cast<int>(r);
  }
  // The step is the slowest rank's end; its figures are the straggler's when the straggler ends then too.
  std::size_t slowest = 0;
  for (std::size_t r = 0; r < step.size(); ++r)
    if (step[r] > step[slowest])
      slowest = r;
  m.step_time_us   = step.empty() ? 0 : step[slowest];
  m.representative = step.empty() || step[static_cast<std::size_t>(m.straggler)] == m.step_time_us
                         ? m.straggler
                         : static_cast<int>(slowest);
  m.rank_step_us   = spread_of(step);
  m.expert_rows    = spread_of(rows);
  m.own_work_us    = spread_of(work);
  return m;
}

nlohmann::ordered_json cluster_summary_json(const ClusterPlan& plan, const ClusterMetrics& m)
{
  auto spread = [](const Spread& s) {
    return nlohmann::ordered_json{{"min", s.min}, {"median", s.median}, {"max", s.max}};
  };
  const RankLoad& s = plan.ranks.at(m.straggler);
  nlohmann::ordered_json j;
  j["ep"]              = plan.ep;
  j["ranks_simulated"] = m.classes;
  j["step_time_us"]    = m.step_time_us;
  j["rank_step_us"]    = spread(m.rank_step_us);
  j["expert_rows"]     = spread(m.expert_rows);
  j["own_work_us"]     = spread(m.own_work_us);
  j["straggler"]       = {{"rank", m.straggler},
                          {"expert_rows", s.expert_rows},
                          {"mlp_us", s.mlp_us},
                          {"dispatch_us", s.dispatch_us},
                          {"combine_us", s.combine_us}};
  j["representative"]  = {
       {"rank", m.representative},
       {"class", plan.ranks.at(m.representative).rank_class},
       {"chosen_as", m.representative == m.straggler ? "the straggler (its step is the cluster's)"
                                                     : "the slowest rank (the straggler ends earlier)"},
       {"figures", "schedule, step_time_us .. per_op and plan are this rank's, as a single-rank run gives them"}};
  j["notes"] = plan.notes;
  return j;
}

std::string cluster_summary_text(const ClusterPlan& plan, const ClusterMetrics& m)
{
  const RankLoad& s = plan.ranks.at(m.straggler);
  std::string out =
      fmt::format("EP {} ({} rank class(es) simulated): step {:.1f} us\n", plan.ep, m.classes, m.step_time_us);
  out += fmt::format("  {:<22} {:>10} {:>10} {:>10}\n", "per rank", "min", "median", "max");
  auto row = [&](const char* name, const Spread& v) {
    out += fmt::format("  {:<22} {:>10.1f} {:>10.1f} {:>10.1f}\n", name, v.min, v.median, v.max);
  };
  row("step (us)", m.rank_step_us);
  row("expert rows", m.expert_rows);
  row("MLP+D+C own (us)", m.own_work_us);
  out += fmt::format("  straggler: rank {} ({:.0f} expert rows, MLP {:.1f} us, D {:.1f} us, C {:.1f} us per layer)\n",
                     m.straggler, s.expert_rows, s.mlp_us, s.dispatch_us, s.combine_us);
  out += fmt::format("  figures below: rank {} ({})\n", m.representative,
                     m.representative == m.straggler ? "the straggler" : "the slowest rank");
  for (const std::string& n : plan.notes)
    out += "  note: " + n + "\n";
  return out;
}

} // namespace dbosim::sim

#include "sim/ClusterRun.hpp"

#include "sim/OutputGuards.hpp"
#include "sim/ScheduleRegistry.hpp"
#include "sim/TimelineCheck.hpp"

#include <fmt/format.h>

#include <chrono>

namespace dbosim::sim {

const models::NetworkFacts& scenario_network_facts(const Scenario& sc) { return sc.network; }

ClusterRun run_cluster(const Scenario& sc, const PlanOptions& opt, int steps,
                       const std::vector<std::string>& simgrid_args, bool force_simgrid)
{
  ClusterRun out;
  out.plan  = build_cluster_plan(sc, model_cost_source(sc), scenario_network_facts(sc), opt);
  out.sched = build_schedule(out.plan.classes.at(0));
  ClusterEngine engine(out.sched, out.plan.classes);
  const auto t0     = std::chrono::steady_clock::now();
  out.simgrid       = force_simgrid || !engine.exact_replay_applies();
  out.timeline      = out.simgrid ? engine.run(steps, simgrid_args) : engine.replay(steps);
  out.engine_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.metrics       = cluster_metrics(out.plan, out.timeline);
  return out;
}

RankStep representative_step(const ClusterRun& run)
{
  RankStep out;
  out.rank                         = run.metrics.representative;
  out.rank_class                   = run.plan.ranks.at(static_cast<std::size_t>(out.rank)).rank_class;
  out.plan                         = &run.plan.classes.at(static_cast<std::size_t>(out.rank_class));
  out.sched                        = build_schedule(*out.plan);
  const std::vector<Timeline>& tls = run.timeline.classes;
  for (std::size_t c = 0; c < tls.size(); ++c)
    require_no_violations(timeline_violations(run.sched, tls[c]),
                          fmt::format("the cluster replay breaks an invariant on rank class {}", c));
  const Timeline& tl = tls.at(static_cast<std::size_t>(out.rank_class));
  require_valid_timeline(out.sched, tl);
  out.metrics = compute_metrics(out.sched, tl);
  return out;
}

} // namespace dbosim::sim

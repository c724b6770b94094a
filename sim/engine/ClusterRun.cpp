#include "sim/engine/ClusterRun.hpp"

#include "base/InputError.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/output/OutputGuards.hpp"
#include "sim/output/TimelineBytes.hpp"
#include "sim/output/TimelineCheck.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <fmt/format.h>

#include <chrono>

namespace dbosim::sim {

const models::NetworkFacts& scenario_network_facts(const Scenario& sc) { return sc.network; }

ClusterRun run_cluster(const Scenario& sc, const PlanOptions& opt, int steps,
                       const std::vector<std::string>& simgrid_args, EngineKind engine_kind,
                       const std::string& engine_option)
{
  ClusterRun out;
  out.plan  = build_cluster_plan(sc, sc.step, model_cost_source(sc), scenario_network_facts(sc), opt);
  out.sched = build_schedule(out.plan.classes.at(0));
  ClusterEngine engine(out.sched, out.plan.classes);
  const auto t0             = std::chrono::steady_clock::now();
  const std::string inexact = engine.replay_inexact_reason();
  if (engine_kind == EngineKind::replay && !inexact.empty())
    refuse_inexact_replay(engine_option, inexact);
  out.simgrid = engine_kind == EngineKind::simgrid || !inexact.empty();
  if (!out.simgrid)
    out.timeline = engine.replay(steps);
  else if (engine_kind == EngineKind::simgrid)
    out.timeline = engine.run(steps, simgrid_args);
  else
    out.timeline = cluster_timeline_from_bytes(simgrid_child_bytes(
        [&] { return cluster_timeline_bytes(engine.run(steps, simgrid_args)); }, "the cluster step"));
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

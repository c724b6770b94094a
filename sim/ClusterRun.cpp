#include "sim/ClusterRun.hpp"

#include "config/NetworkFactsLoader.hpp"
#include "sim/ScheduleRegistry.hpp"

#include <chrono>

namespace dbosim::sim {

models::NetworkFacts scenario_network_facts(const Scenario& sc)
{
  return load_network_facts(sc.cluster.network.empty() ? sc.hw.name : sc.cluster.network);
}

ClusterRun run_cluster(const Scenario& sc, const PlanOptions& opt, int steps,
                       const std::vector<std::string>& simgrid_args)
{
  ClusterRun out;
  out.plan = build_cluster_plan(sc, model_cost_source(sc), scenario_network_facts(sc), opt);
  for (const StepPlan& p : out.plan.classes)
    out.scheds.push_back(build_schedule(p));
  ClusterEngine engine(out.scheds, out.plan.classes);
  const auto t0     = std::chrono::steady_clock::now();
  out.timeline      = engine.run(steps, simgrid_args);
  out.engine_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.metrics       = cluster_metrics(out.plan, out.timeline);
  return out;
}

} // namespace dbosim::sim

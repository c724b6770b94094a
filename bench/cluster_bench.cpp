/* dbosim — how fast the cluster engine replays one step with every rank simulated: a 61-layer DeepSeek-V3 DBO decode
 * step at EP256 (scenarios/dsv3_decode_ep256_h800.yaml, uniform routing drawn from the seed, so all 256 ranks
 * differ), against the single-rank engine on the same step shape (in a forked child: one SimGrid per process).
 *
 *   build/bench/cluster_bench [scenario.yaml] [steps]
 *
 * Prints the plan time (routing + per-rank costs), the engine's wall and CPU time per step, the ranks simulated and
 * the ratio to the single-rank step. */
#include "base/ChildProcess.hpp"
#include "config/ScenarioLoader.hpp"
#include "sim/engine/ClusterRun.hpp"
#include "sim/engine/TimelineEngine.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

struct Timing {
  double wall_ms_per_step = -1;
  double cpu_ms_per_step  = -1;
};

/** The single-rank engine on the cluster's first rank class, in a forked child. */
Timing single_rank(const StepPlan& plan, int steps)
{
  const ChildResult child = run_in_child([&] {
    Timing t;
    Schedule s = build_schedule(plan);
    TimelineEngine e(s, plan); // `steps` back-to-back steps: the engine's own speed, beyond sim::run_step's one
    const auto t0         = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    e.run(steps);
    t.wall_ms_per_step =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps;
    t.cpu_ms_per_step = 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / steps;
    return std::string(reinterpret_cast<const char*>(&t), sizeof t);
  });
  Timing t;
  if (child.ok() && child.payload.size() == sizeof t)
    std::memcpy(&t, child.payload.data(), sizeof t);
  return t;
}

} // namespace

int main(int argc, char** argv)
{
  const std::string path =
      argc > 1 ? argv[1] : std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_decode_ep256_h800.yaml";
  const int steps = argc > 2 ? std::stoi(argv[2]) : 5;
  Scenario sc     = load_scenario(path);

  const auto p0    = std::chrono::steady_clock::now();
  ClusterPlan plan = build_cluster_plan(sc, sc.step, model_cost_source(sc), scenario_network_facts(sc));
  const double cluster_plan_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();
  Schedule sched       = build_schedule(plan.classes[0]); // every rank class runs this DAG
  const double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p0).count();

  const Timing one = single_rank(plan.classes[0], steps);

  ClusterEngine engine(sched, plan.classes);
  double replay_cpu = -1;
  if (engine.exact_replay_applies()) { // the exact max-plus replay, best of 5 rounds
    double best_wall = 1e300, best_cpu = 1e300;
    for (int round = 0; round < 5; ++round) {
      const auto r0         = std::chrono::steady_clock::now();
      const std::clock_t q0 = std::clock();
      engine.replay(steps);
      best_wall = std::min(
          best_wall, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r0).count() / steps);
      best_cpu = std::min(best_cpu, 1e3 * static_cast<double>(std::clock() - q0) / CLOCKS_PER_SEC / steps);
    }
    replay_cpu = best_cpu;
    fmt::print("exact max-plus replay (every rank): {:.1f} ms wall, {:.1f} ms CPU per step\n", best_wall, best_cpu);
  } else {
    fmt::print("exact max-plus replay: not applicable (ranks share resources)\n");
  }
  const auto t0         = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  ClusterTimeline tl    = engine.run(steps);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps;
  const double cpu  = 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / steps;
  ClusterMetrics m  = cluster_metrics(plan, tl);

  fmt::print("scenario {}: EP {}, {} layers, {} ops per rank, {} rank classes simulated, {} steps\n", sc.name, plan.ep,
             plan.classes[0].num_layers, sched.num_ops(), plan.num_classes(), steps);
  fmt::print("plan: {:.1f} ms (routing + per-rank costs {:.1f} ms, the shared schedule {:.1f} ms)\n", plan_ms,
             cluster_plan_ms, plan_ms - cluster_plan_ms);
  fmt::print("SimGrid cluster engine: {:.1f} ms wall, {:.1f} ms CPU per step (simulated step {:.1f} us)\n", wall, cpu,
             tl.step_time());
  fmt::print("single-rank engine: {:.2f} ms wall, {:.2f} ms CPU per step\n", one.wall_ms_per_step, one.cpu_ms_per_step);
  fmt::print("ratio to the single-rank step (CPU): SimGrid cluster {:.0f}x", cpu / one.cpu_ms_per_step);
  if (replay_cpu > 0)
    fmt::print(", max-plus replay {:.1f}x, plan + replay of one step {:.1f} ms = {:.0f}x",
               replay_cpu / one.cpu_ms_per_step, plan_ms + replay_cpu, (plan_ms + replay_cpu) / one.cpu_ms_per_step);
  fmt::print("\n");
  fmt::print("{}", cluster_summary_text(plan, m));
  return 0;
}

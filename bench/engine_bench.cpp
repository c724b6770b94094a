/* dbosim — how fast the engine replays one step: a 61-layer DeepSeek-V3-shaped decode step (3 dense + 58 MoE layers)
 * for one rank. With a scenario file (DBOSIM_BENCH_SCENARIO=path) the op costs come from the cost models; without one,
 * from fixed synthetic durations (the engine's work does not depend on the values).
 *
 * SimGrid allows one simulation per process, so each benchmark runs once per process (--benchmark_filter=NAME) and
 * simulates `steps` back-to-back steps in that one engine; the reported time is wall time per step. */
#include "config/ScenarioLoader.hpp"
#include "sim/engine/TimelineEngine.hpp"
#include "sim/plan/StepPlanBuilder.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

bool engine_used = false; // one SimGrid engine per process

StepPlan bench_plan(ScheduleId schedule, int ubatches, bool cuda_graph)
{
  if (const char* path = std::getenv("DBOSIM_BENCH_SCENARIO")) {
    static Scenario sc = load_scenario(path);
    if (ubatches == 1) { // the same step unsplit
      sc.overlap.enable_dbo  = false;
      sc.overlap.ubatch_size = 0;
    }
    PlanOptions opt;
    opt.schedule         = schedule_name(schedule);
    StepPlan plan        = build_step_plan(sc, sc.step, model_cost_source(sc), opt);
    plan.host.cuda_graph = cuda_graph;
    return plan;
  }
  LayerDurations d; // DeepSeek-V3-like decode magnitudes (µs)
  d.a0_us                   = 30;
  d.a1_us                   = 60;
  d.d_us                    = 120;
  d.mlp_us                  = 80;
  d.s_us                    = 20;
  d.c_us                    = 200;
  d.dense_mlp_us            = 60;
  d.kernels_per_op          = 4;
  StepPlan plan             = synthetic_plan(schedule, 61, 3, ubatches, d);
  plan.host.cuda_graph      = cuda_graph;
  plan.host.launch_cpu_us   = 4;
  plan.host.event_us        = 1;
  plan.host.handoff_us      = ubatches > 1 ? 1 : 0;
  plan.host.graph_launch_us = 4;
  return plan;
}

void replay_steps(benchmark::State& state, ScheduleId schedule, int ubatches, bool cuda_graph)
{
  if (engine_used) {
    state.SkipWithError("one SimGrid simulation per process: run this benchmark alone (--benchmark_filter=NAME)");
    return;
  }
  engine_used     = true;
  const int steps = static_cast<int>(state.range(0));
  StepPlan plan   = bench_plan(schedule, ubatches, cuda_graph);
  Schedule sched  = build_schedule(plan);
  TimelineEngine engine(sched, plan);
  double simulated_us = 0;
  for (auto _ : state) {
    const auto t0                            = std::chrono::steady_clock::now();
    const std::clock_t c0                    = std::clock();
    Timeline tl                              = engine.run(steps);
    const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
    state.SetIterationTime(wall.count() / steps);
    // CPU time too: on a shared machine the wall time also measures the neighbours.
    state.counters["cpu_ms_per_step"] = 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / steps;
    simulated_us                      = tl.step_time();
  }
  state.counters["ops_per_step"]      = static_cast<double>(sched.num_ops());
  state.counters["simulated_step_us"] = simulated_us;
  state.counters["steps"]             = steps;
}

void BM_dbo_decode_graph(benchmark::State& state) { replay_steps(state, ScheduleId::dbo, 2, true); }
void BM_dbo_decode_eager(benchmark::State& state) { replay_steps(state, ScheduleId::dbo, 2, false); }
void BM_serial_decode_graph(benchmark::State& state) { replay_steps(state, ScheduleId::serial, 1, true); }

} // namespace

// One iteration = one engine (the process's only one) simulating Arg() steps; time reported per step.
BENCHMARK(BM_dbo_decode_graph)->Arg(200)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_dbo_decode_eager)->Arg(200)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_serial_decode_graph)->Arg(200)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

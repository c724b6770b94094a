/* sim::run_step: the one way to run a single-rank step; its timeline is always checked, so a replay that breaks an
 * invariant fails loudly in every caller (dbosim run, the serving oracle, validate's replays). Each simulation runs
 * in a forked child: SimGrid allows one per process. */
#include "TempDir.hpp"
#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/plan/StepPlanBuilder.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"
#include "validate/ChildSim.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <string>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

/** A SimGrid option that rounds the engine's clock to the millisecond (surf/precision, in seconds): ops that share
 *  the GPU (an SM partition) then end sooner than their cost, a timeline the guards must refuse. */
const std::string coarse_clock = "--cfg=surf/precision:1e-3";

/** scenarios/default.yaml's step: DBO decode, 128 tokens, DeepEP low-latency holding SMs (a partition). */
const char* const partitioned_yaml = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 128, context_len: 4096}
overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}
execution: {cuda_graph: full}
)";

StepPlan small_plan()
{
  LayerDurations d;
  d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 15, d.c_us = 25;
  return synthetic_plan(ScheduleId::serial, 2, 0, 1, d);
}

} // namespace

TEST_CASE("sim::run_step: a serial step's timeline, checked, and its metrics", "[quick]")
{
  const ChildResult r = run_in_child([] {
    const StepPlan plan  = small_plan();
    const Schedule sched = build_schedule(plan);
    const StepRun run    = run_step(plan, sched);
    return fmt::format("{} {} {}", run.timeline.ops.size() == sched.num_ops() ? 1 : 0, run.metrics.step_time_us,
                       run.timeline.step_time());
  });
  INFO(r.message);
  REQUIRE(r.ok());
  // Two layers of A0 A1 D MLP S C back to back on a free host: 2 x (10 + 20 + 30 + 40 + 15 + 25) = 280 us.
  double metrics_us = 0, timeline_us = 0;
  int every_op = 0;
  REQUIRE(std::sscanf(r.payload.c_str(), "%d %lf %lf", &every_op, &metrics_us, &timeline_us) == 3);
  CHECK(every_op == 1);
  CHECK(metrics_us == Approx(280).epsilon(1e-9));
  CHECK(timeline_us == Approx(280).epsilon(1e-9));
}

TEST_CASE("sim::run_step: a timeline with ops faster than their cost is an internal error", "[quick]")
{
  test::TempDir dir;
  const Scenario s    = load_scenario(dir.write("s.yaml", partitioned_yaml));
  const ChildResult r = run_in_child([&] {
    const StepPlan plan  = build_step_plan(s, s.step, model_cost_source(s), {});
    const Schedule sched = build_schedule(plan);
    run_step(plan, sched, {{coarse_clock}});
    return std::string("not refused");
  });
  CHECK(r.outcome == ChildOutcome::internal_error);
  CHECK_THAT(r.message, Catch::Contains("the replayed timeline breaks an invariant"));
  CHECK_THAT(r.message, Catch::Contains("faster than its cost"));
}

TEST_CASE("sim::run_step: the serving oracle's steps are checked too", "[quick]")
{
  test::TempDir dir;
  const Scenario s = load_scenario(dir.write("s.yaml", partitioned_yaml));
  const serving::StepKey key{{models::Phase::decode, 128, 128, 4096}};
  SECTION("a sound replay gives a step time")
  {
    serving::EngineOracle oracle(s, 1);
    CHECK(oracle.simulate({key}).at(0).step_us > 0);
  }
  SECTION("a replay that breaks an invariant fails the step, naming it")
  {
    serving::EngineOracle oracle(s, 1, {coarse_clock});
    try {
      oracle.simulate({key});
      FAIL("the oracle accepted a broken timeline");
    } catch (const InputError& e) {
      FAIL(std::string("an input error: ") + e.what());
    } catch (const InternalError& e) {
      CHECK_THAT(e.what(), Catch::Contains("the replayed timeline breaks an invariant"));
      CHECK_THAT(e.what(), Catch::Contains(key.to_string()));
    }
  }
}

TEST_CASE("sim::run_step: validate's replay of a plan, through its child", "[quick]")
{
  const validate::Prediction p = validate::simulate_in_child(small_plan());
  CHECK(p.ops.size() == 12);
  CHECK(p.makespan_us == Approx(280).epsilon(1e-9));
}

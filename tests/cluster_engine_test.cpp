/* dbosim tests — ClusterEngine: collectives couple the rank classes (a collective ends when its slowest participant
 * does), and identical ranks replay exactly as the single-rank TimelineEngine. One simulation per process: a second
 * one runs in a forked child. */
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/TimelineEngine.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include "InChild.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

LayerDurations rank_a()
{
  LayerDurations d;
  d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 5, d.c_us = 50;
  return d;
}

LayerDurations rank_b()
{
  LayerDurations d = rank_a();
  d.d_us = 60, d.mlp_us = 70, d.c_us = 10;
  return d;
}

/** The single-rank engine's step time, in a forked child (a fresh SimGrid). */
double single_rank_step_in_child(const StepPlan& plan)
{
  const double us = test::in_child<double>([&] {
    Schedule s = build_schedule(plan);
    TimelineEngine e(s, plan);
    return e.run(2).step_time();
  });
  REQUIRE(us > 0);
  return us;
}

} // namespace

TEST_CASE("cluster::engine: a collective ends when its slowest rank's part does (serial, closed form)",
          "[quick][cluster]")
{
  std::vector<StepPlan> plans = {synthetic_plan(ScheduleId::serial, 1, 0, 1, rank_a()),
                                 synthetic_plan(ScheduleId::serial, 1, 0, 1, rank_b())};
  Schedule sched              = build_schedule(plans[0]); // every rank class runs this DAG
  ClusterEngine engine(sched, plans);
  ClusterTimeline tl = engine.run();
  // Serial on one stream: A0 A1 D MLP S C. D ends for both at a0 + a1 + max(D); C at max over ranks of
  // (D end + MLP + S + C).
  const LayerDurations a = rank_a(), b = rank_b();
  const double d_end = a.a0_us + a.a1_us + std::max(a.d_us, b.d_us);
  const double c_end = std::max(d_end + a.mlp_us + a.s_us + a.c_us, d_end + b.mlp_us + b.s_us + b.c_us);
  CHECK(tl.step_time() == Approx(c_end).epsilon(1e-9));
  for (const Timeline& t : tl.classes) {
    for (std::size_t v = 0; v < sched.num_ops(); ++v) {
      const OpKind k = sched.ops[v].kind;
      if (k == OpKind::D)
        CHECK(t.ops[v].end_us == Approx(d_end).epsilon(1e-9));
      if (k == OpKind::C)
        CHECK(t.ops[v].end_us == Approx(c_end).epsilon(1e-9));
    }
  }
}

TEST_CASE("cluster::engine: identical rank classes replay as the single-rank engine (DBO, 2 steps)", "[quick][cluster]")
{
  LayerDurations d        = rank_a();
  d.dense_mlp_us          = 25;
  d.kernels_per_op        = 3;
  StepPlan plan           = synthetic_plan(ScheduleId::dbo, 6, 2, 2, d);
  plan.host.launch_cpu_us = 4; // eager host costs too
  plan.host.event_us      = 1;
  plan.host.handoff_us    = 1;
  plan.host.kernel_gap_us = 1;
  const double single     = single_rank_step_in_child(plan);
  std::vector<StepPlan> plans(3, plan);
  Schedule sched = build_schedule(plans[0]); // every rank class runs this DAG
  ClusterEngine engine(sched, plans);
  ClusterTimeline tl = engine.run(2);
  CHECK(tl.step_time() == Approx(single).epsilon(1e-12));
}

TEST_CASE("cluster::engine: the max-plus replay equals the SimGrid run (DBO, 4 distinct ranks, 2 steps)",
          "[quick][cluster]")
{
  std::vector<StepPlan> plans;
  for (int r = 0; r < 4; ++r) {
    LayerDurations d = r % 2 ? rank_b() : rank_a();
    d.mlp_us += 7 * r;
    d.dense_mlp_us       = 25;
    d.kernels_per_op     = 2;
    StepPlan p           = synthetic_plan(ScheduleId::dbo, 5, 1, 2, d);
    p.host.launch_cpu_us = 3;
    p.host.event_us      = 1;
    p.host.handoff_us    = 1;
    p.host.kernel_gap_us = 0.5;
    p.gpu.comm_sms       = r == 3 ? 20 : 0; // a partition without SM-resident comm still shares nothing
    plans.push_back(p);
  }
  Schedule sched = build_schedule(plans[0]); // every rank class runs this DAG
  ClusterEngine engine(sched, plans);
  REQUIRE(engine.exact_replay_applies());
  const ClusterTimeline fast = engine.replay(2);
  const ClusterTimeline sim  = engine.run(2);
  REQUIRE(fast.step_time_us.size() == sim.step_time_us.size());
  for (std::size_t s = 0; s < sim.step_time_us.size(); ++s)
    CHECK(fast.step_time_us[s] == Approx(sim.step_time_us[s]).epsilon(1e-9));
  for (std::size_t c = 0; c < plans.size(); ++c)
    for (std::size_t v = 0; v < sched.num_ops(); ++v) {
      CHECK(fast.classes[c].ops[v].issue_us == Approx(sim.classes[c].ops[v].issue_us).margin(1e-6));
      CHECK(fast.classes[c].ops[v].start_us == Approx(sim.classes[c].ops[v].start_us).margin(1e-6));
      CHECK(fast.classes[c].ops[v].end_us == Approx(sim.classes[c].ops[v].end_us).margin(1e-6));
    }
}

namespace {

/** async_combine, 1 MoE layer, two rank classes (rank_a; rank_b with C 60 µs) whose comm kernels are SM-resident. */
std::vector<StepPlan> sm_resident_async_combine()
{
  LayerDurations b            = rank_b();
  b.c_us                      = 60;
  std::vector<StepPlan> plans = {synthetic_plan(ScheduleId::async_combine, 1, 0, 1, rank_a()),
                                 synthetic_plan(ScheduleId::async_combine, 1, 0, 1, b)};
  for (StepPlan& p : plans)
    p.gpu.comm_uses_sms = true;
  return plans;
}

double end_of(const ClusterTimeline& tl, const Schedule& sched, std::size_t c, OpKind k)
{
  for (std::size_t v = 0; v < sched.num_ops(); ++v)
    if (sched.ops[v].kind == k)
      return tl.classes[c].ops[v].end_us;
  FAIL("no such op");
  return -1;
}

} // namespace

TEST_CASE("cluster::engine: on every rank, compute beside a comm kernel slows it by comm_with_compute (closed form)",
          "[quick][cluster]")
{
  // D ends for both at 10 + 20 + max(30, 60) = 90; MLP ends at 130 (a) and 160 (b); then C and S start together.
  // With a comm slowdown of 2, C makes S/2 = 2.5 µs of progress while S (5 µs) runs: a's part ends at
  // 130 + 5 + 47.5 = 182.5, b's at 160 + 5 + 57.5 = 222.5 (220 without the slowdown); C ends for both at 222.5.
  std::vector<StepPlan> plans = sm_resident_async_combine();
  for (StepPlan& p : plans)
    p.gpu.comm_slowdown_shared = 2;
  Schedule sched = build_schedule(plans[0]);
  ClusterEngine engine(sched, plans);
  const ClusterTimeline tl = engine.run();
  CHECK(tl.step_time() == Approx(222.5).epsilon(1e-9));
  CHECK(end_of(tl, sched, 0, OpKind::C) == Approx(222.5).epsilon(1e-9));
  CHECK(end_of(tl, sched, 0, OpKind::S) == Approx(135).epsilon(1e-9));
}

TEST_CASE("cluster::engine: on every rank, a comm kernel that needs whole SMs waits for the running compute op",
          "[quick][cluster]")
{
  // As above without the slowdown, with residency: S (ready with C) runs first, C gets the SMs when S ends. a's part
  // runs 135-185, b's 165-225 (220 without residency); C ends for both at 225, b's C record still starts at 160.
  std::vector<StepPlan> plans = sm_resident_async_combine();
  for (StepPlan& p : plans)
    p.gpu.comm_needs_whole_sms = true;
  Schedule sched = build_schedule(plans[0]);
  ClusterEngine engine(sched, plans);
  const ClusterTimeline tl = engine.run();
  CHECK(tl.step_time() == Approx(225).epsilon(1e-9));
  CHECK(end_of(tl, sched, 0, OpKind::C) == Approx(225).epsilon(1e-9));
  for (std::size_t v = 0; v < sched.num_ops(); ++v)
    if (sched.ops[v].kind == OpKind::C)
      CHECK(tl.classes[1].ops[v].start_us == Approx(160).epsilon(1e-9));
}

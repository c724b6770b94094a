/* The invariant checker itself must catch broken timelines (no simulation here). */
#include "sim/output/TimelineCheck.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>

using namespace dbosim::sim;

TEST_CASE("sim::TimelineCheck: catches overlap on a stream, a broken dependency, an early start", "[quick]")
{
  LayerDurations d;
  d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 15, d.c_us = 25;
  const StepPlan plan  = synthetic_plan(ScheduleId::serial, 1, 0, 1, d);
  const Schedule sched = build_schedule(plan);
  // A valid serial timeline: ops back to back from t = 0, issued at 0.
  Timeline tl;
  double t = 0;
  for (OpVertex v : sched.issue_order) {
    const double dur = sched.ops[v].duration_us;
    tl.ops.resize(sched.num_ops());
    tl.ops[v] = OpRecord{0, 0, t, t + dur, -1};
    t += dur;
  }
  tl.step_time_us = {t};
  CHECK(timeline_violations(sched, tl).empty());

  SECTION("two ops overlap on the stream (and the second starts before its producer ends)")
  {
    // A1 starts 5 µs before A0 ends: the stream overlap, plus both edges A0 -> A1 (data and stream order).
    const OpVertex second = sched.issue_order[1];
    tl.ops[second].start_us -= 5;
    CHECK(timeline_violations(sched, tl).size() == 3);
  }
  SECTION("an op starts before the host issued it")
  {
    const OpVertex first   = sched.issue_order[0];
    tl.ops[first].issue_us = 3;
    const auto v           = timeline_violations(sched, tl);
    REQUIRE(!v.empty());
    CHECK_THAT(v.front(), Catch::Contains("before its host issue"));
  }
  SECTION("the step time is not the last op's end")
  {
    tl.step_time_us = {t + 1};
    CHECK(timeline_violations(sched, tl).size() == 1);
  }
}

TEST_CASE("sim::Schedule: a default schedule has an empty graph that the checks walk, a copy shares its builder's",
          "[quick]")
{
  const Schedule none;
  REQUIRE(none.graph != nullptr);
  CHECK(none.num_ops() == 0);
  Timeline tl;
  tl.step_time_us = {0.0};
  CHECK(timeline_violations(none, tl).empty());
  CHECK(duration_violations(none, tl).empty());

  LayerDurations d;
  d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 15, d.c_us = 25;
  const Schedule built = build_schedule(synthetic_plan(ScheduleId::serial, 1, 0, 1, d));
  const Schedule copy  = built; // the copy is the subject
  CHECK(copy.graph == built.graph);
  CHECK(copy.num_ops() == built.num_ops());
  CHECK(built.num_ops() == 6); // A0 A1 D MLP S C
}

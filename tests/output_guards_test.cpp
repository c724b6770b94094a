/* The output guards (sim/output/OutputGuards, sim/output/TimelineCheck's duration check, the cost guards at the plan's
 * edge): each fed a corrupted summary, timeline or profile must refuse it, naming the figure or op. No simulation here.
 */
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "models/CostGuards.hpp"
#include "sim/output/OutputGuards.hpp"
#include "sim/output/TimelineCheck.hpp"
#include "sim/plan/StepPlanBuilder.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace dbosim;
using namespace dbosim::sim;
using json = nlohmann::ordered_json;

namespace {
json good_summary()
{
  return json{{"step_time_us", 812.5},
              {"per_layer_us", {13.0, 12.5}},
              {"stream_busy_pct", {{"compute", 88.2}, {"comm", 100.0}, {"host", 0.0}}},
              {"serving", {{"p99_itl_ms", 41.0}, {"bucket_error", {{"max_error_pct", 140.0}}}}},
              {"plan", {{"notes", {"a note"}}, {"cuda_graph", true}}}};
}

/** A serial one-layer plan and a valid back-to-back timeline of it. */
struct SerialRun {
  StepPlan plan;
  Schedule sched;
  Timeline tl;
  SerialRun()
  {
    LayerDurations d;
    d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 15, d.c_us = 25;
    plan  = synthetic_plan(ScheduleId::serial, 1, 0, 1, d);
    sched = build_schedule(plan);
    tl.ops.resize(sched.num_ops());
    double t = 0;
    for (OpVertex v : sched.issue_order) {
      tl.ops[v] = OpRecord{0, 0, t, t + sched.ops[v].duration_us, -1};
      t += sched.ops[v].duration_us;
    }
    tl.step_time_us = {t};
  }
};
} // namespace

TEST_CASE("sim::OutputGuards: summary figures finite, busy within 0..100%, times non-negative", "[quick]")
{
  json s = good_summary();
  CHECK(summary_violations(s).empty());
  CHECK_NOTHROW(require_valid_summary(s));
  SECTION("a NaN figure, named by its path")
  {
    s["per_layer_us"][1] = std::numeric_limits<double>::quiet_NaN();
    REQUIRE(summary_violations(s).size() == 1);
    CHECK_THAT(summary_violations(s).front(), Catch::Contains("per_layer_us[1]") && Catch::Contains("not finite"));
    CHECK_THROWS_AS(require_valid_summary(s), InternalError);
  }
  SECTION("an infinite figure deep in a block")
  {
    s["serving"]["p99_itl_ms"] = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH(require_valid_summary(s), Catch::Contains("serving.p99_itl_ms = inf is not finite"));
  }
  SECTION("a stream busy more than 100% of the step")
  {
    s["stream_busy_pct"]["comm"] = 100.5;
    CHECK_THROWS_WITH(require_valid_summary(s),
                      Catch::Contains("stream_busy_pct.comm = 100.5% busy is outside 0..100%"));
  }
  SECTION("a negative busy share")
  {
    s["stream_busy_pct"]["host"] = -1.0;
    CHECK(summary_violations(s).size() == 1);
  }
  SECTION("a negative time")
  {
    s["step_time_us"] = -3.0;
    CHECK_THROWS_WITH(require_valid_summary(s), Catch::Contains("step_time_us = -3 is a negative time"));
  }
  SECTION("several violations: the message lists the first five and counts the rest")
  {
    for (int i = 0; i < 7; ++i)
      s["extra"].push_back(std::numeric_limits<double>::quiet_NaN());
    CHECK_THROWS_WITH(require_valid_summary(s),
                      Catch::Contains("extra[4]") && Catch::Contains("and 2 more") && !Catch::Contains("extra[5]"));
  }
}

TEST_CASE("sim::TimelineCheck: an op that ran faster than its cost is caught", "[quick]")
{
  SerialRun r;
  CHECK(duration_violations(r.sched, r.tl).empty());
  CHECK_NOTHROW(require_valid_timeline(r.sched, r.tl));
  // D (30 us) ends 1 us early: the comm op moved its bytes faster than the cost model (hence the link) allows.
  OpVertex d = 0;
  for (OpVertex v : r.sched.issue_order)
    if (r.sched.ops[v].kind == OpKind::D)
      d = v;
  r.tl.ops[d].end_us -= 1;
  const auto v = duration_violations(r.sched, r.tl);
  REQUIRE(v.size() == 1);
  CHECK_THAT(v.front(),
             Catch::Contains("D(layer 0, ubatch 0) ran 29 us") && Catch::Contains("faster than its cost 30"));
  CHECK_THROWS_AS(require_valid_timeline(r.sched, r.tl), InternalError);
  SECTION("a stretched op (contention, interference) is fine")
  {
    r.tl.ops[d].end_us += 11;
    CHECK(duration_violations(r.sched, r.tl).empty());
  }
  SECTION("a non-finite time is caught")
  {
    r.tl.ops[d].end_us = std::numeric_limits<double>::quiet_NaN();
    CHECK(duration_violations(r.sched, r.tl).size() == 1);
  }
}

TEST_CASE("sim::model_cost_source: a profile whose measured kernels beat its own peak is an internal error", "[quick]")
{
  // The shipped H200 profile's measured tables, with the datasheet peak cut to 1 TFLOP/s: a measured GEMM then runs
  // faster than the profile's peak allows, which is a broken profile, never a figure to print.
  Scenario s = load_scenario(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_decode_ep8_serial.yaml");
  REQUIRE_NOTHROW(build_step_plan(s, s.step, model_cost_source(s)));
  for (auto& [dtype, flops] : s.hw.peak_flops_per_s)
    flops = 1e12;
  CHECK_THROWS_AS(build_step_plan(s, s.step, model_cost_source(s)), models::CostBoundViolation);
  CHECK_THROWS_WITH(build_step_plan(s, s.step, model_cost_source(s)),
                    Catch::Contains("violates a physical bound") && Catch::Contains("exceeds the profile's peak"));
}

/* Invariants of every replay: no two ops overlap on one stream, every dependency is respected, no op starts before
 * the host issued it, and the host's issue times follow its costs. One schedule (one simulation) per TEST_CASE. */
#include "sim/engine/TimelineEngine.hpp"
#include "sim/output/Metrics.hpp"
#include "sim/output/TimelineCheck.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/OpGraph.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>

using namespace dbosim::sim;

namespace {

constexpr double eps_us = 1e-6;

// Uneven durations so that every kind of wait occurs somewhere; an eager host with launch and event costs.
StepPlan plan_for(ScheduleId schedule, int ubatches)
{
  LayerDurations d;
  d.a0_us                   = 7;
  d.a1_us                   = 23;
  d.d_us                    = 41;
  d.mlp_us                  = 19;
  d.s_us                    = 11;
  d.c_us                    = 53;
  d.dense_mlp_us            = 29;
  d.kernels_per_op          = 3;
  StepPlan p                = synthetic_plan(schedule, 6, 2, ubatches, d);
  p.host.launch_cpu_us      = 2.5;
  p.host.event_us           = 1;
  p.host.handoff_us         = 4;
  p.gpu.comm_uses_sms       = true;
  p.gpu.interference_shared = 1.1;
  return p;
}

void check_invariants(const StepPlan& plan)
{
  Schedule sched = build_schedule(plan);
  TimelineEngine engine(sched, plan);
  Timeline tl = engine.run(2); // two steps: the second must replay the first's conditions exactly
  REQUIRE(tl.step_time_us.size() == 2);
  CHECK(tl.step_time_us[0] == Approx(tl.step_time_us[1]).margin(1e-6));

  const std::vector<std::string> violations = timeline_violations(sched, tl);
  for (const std::string& v : violations)
    FAIL_CHECK(v);
  CHECK(violations.empty());
  // The host pays exactly its computed issue cost before each op.
  for (OpVertex v : sched.issue_order)
    CHECK(tl.ops[v].issue_us - tl.ops[v].host_begin_us == Approx(engine.host_cost_us(v)).margin(eps_us));
  Metrics m   = compute_metrics(sched, tl);
  double path = 0;
  for (const auto& [k, us] : m.critical_path_us)
    path += us;
  CHECK(path == Approx(m.step_time_us).margin(1e-3));
  CHECK(m.exposed_comm_us + m.overlap_us == Approx(m.comm_us).margin(1e-6));
}

} // namespace

TEST_CASE("sim::invariants: serial", "[quick]") { check_invariants(plan_for(ScheduleId::serial, 1)); }

TEST_CASE("sim::invariants: async_combine", "[quick]") { check_invariants(plan_for(ScheduleId::async_combine, 1)); }

TEST_CASE("sim::invariants: dbo", "[quick]") { check_invariants(plan_for(ScheduleId::dbo, 2)); }

TEST_CASE("sim::invariants: dbo with the ROCm host sync", "[quick]")
{
  StepPlan p                  = plan_for(ScheduleId::dbo, 2);
  p.host.host_sync_after_comm = true;
  p.host.stream_sync_us       = 5;
  check_invariants(p);
}

TEST_CASE("sim::invariants: serial with the ROCm host sync (the step ends in the host's last sync)", "[quick]")
{
  // The last op issued is the last layer's combine, and the host syncs after it: the step ends at its release.
  StepPlan p                  = plan_for(ScheduleId::serial, 1);
  p.host.host_sync_after_comm = true;
  p.host.stream_sync_us       = 5;
  check_invariants(p);
}

TEST_CASE("sim::invariants: dbo under a full CUDA graph and an SM partition", "[quick]")
{
  StepPlan p                     = plan_for(ScheduleId::dbo, 2);
  p.host.cuda_graph              = true;
  p.host.graph_launch_us         = 3;
  p.host.kernel_gap_us           = 0.5;
  p.gpu.comm_sms                 = 20;
  p.gpu.interference_partitioned = 1.05;
  check_invariants(p);
}

TEST_CASE("sim::invariants: deepseek_decode", "[quick]") { check_invariants(plan_for(ScheduleId::deepseek_decode, 2)); }

TEST_CASE("sim::invariants: deepseek_prefill", "[quick]")
{
  check_invariants(plan_for(ScheduleId::deepseek_prefill, 2));
}

TEST_CASE("sim::invariants: sglang_tbo decode", "[quick]") { check_invariants(plan_for(ScheduleId::sglang_tbo, 2)); }

TEST_CASE("sim::invariants: sglang_tbo prefill", "[quick]")
{
  StepPlan p = plan_for(ScheduleId::sglang_tbo, 2);
  p.prefill  = true;
  check_invariants(p);
}

TEST_CASE("sim::build_schedule: a schedule kept by its shape is what the builder makes of the new plan's numbers",
          "[quick]")
{
  for (const ScheduleEntry& e : schedule_registry())
    for (const bool wait_tail : {false, true}) {
      CAPTURE(e.name, wait_tail);
      StepPlan first                      = plan_for(e.id, e.num_ubatches);
      first.collectives_wait_compute_tail = wait_tail && e.id == ScheduleId::dbo;
      build_schedule(first); // kept
      LayerDurations d;      // other numbers, the same ops
      d.a0_us = 3, d.a1_us = 5, d.d_us = 7, d.mlp_us = 11, d.s_us = 13, d.c_us = 17, d.dense_mlp_us = 19;
      d.kernels_per_op                     = 2;
      StepPlan second                      = synthetic_plan(e.id, 6, 2, e.num_ubatches, d);
      second.collectives_wait_compute_tail = first.collectives_wait_compute_tail;
      second.step_work_us                  = 77;
      second.ubatches.back().real_tokens   = 0; // a dummy micro-batch: its ops' flag is a number too
      const Schedule kept                  = build_schedule(second);
      const Schedule fresh                 = e.build(second);
      CHECK(kept.name == fresh.name);
      CHECK(kept.step_work_us == fresh.step_work_us);
      CHECK(kept.issue_order == fresh.issue_order);
      CHECK(kept.stream_order == fresh.stream_order);
      REQUIRE(kept.ops.size() == fresh.ops.size());
      for (std::size_t i = 0; i < kept.ops.size(); ++i) {
        const Op &a = kept.ops[i], &b = fresh.ops[i];
        CHECK((a.kind == b.kind && a.layer == b.layer && a.ubatch == b.ubatch && a.stream == b.stream &&
               a.host_thread == b.host_thread && a.issue_index == b.issue_index && a.duration_us == b.duration_us &&
               a.partitioned_duration_us == b.partitioned_duration_us && a.kernels == b.kernels &&
               a.eager_kernels == b.eager_kernels && a.graph_launches == b.graph_launches &&
               a.flight_us == b.flight_us && a.dummy == b.dummy));
      }
      CHECK(boost::num_edges(kept.graph->dag) == boost::num_edges(fresh.graph->dag));
      // Another shape (no shared expert) is built for itself, not served from the kept one.
      d.s_us                   = -1;
      const StepPlan no_shared = synthetic_plan(e.id, 6, 2, e.num_ubatches, d);
      const Schedule without_s = build_schedule(no_shared);
      const Schedule fresh_nos = e.build(no_shared);
      CHECK(without_s.ops.size() == fresh_nos.ops.size());
      CHECK(without_s.issue_order == fresh_nos.issue_order);
    }
}

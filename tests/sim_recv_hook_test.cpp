/* Recv hooks (DeepEP low-latency with return_recv_hook, as vLLM and SGLang run it under DBO/TBO): a collective is a
 * send kernel, then its data in flight on no stream, then a recv kernel on the compute stream that waits for the
 * landing. Plans,
 * schedules, the single-rank engine, the cluster's SimGrid run and max-plus replay, and the timeline checker. One
 * simulation per process: each runs in a forked child. */
#include "base/InputError.hpp"
#include "sim/engine/ClusterEngine.hpp"
#include "sim/engine/TimelineEngine.hpp"
#include "sim/output/Metrics.hpp"
#include "sim/output/TimelineCheck.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/OpGraph.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include "InChild.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

using namespace dbosim;
using namespace dbosim::sim;
using dbosim::test::in_child;

namespace {

LayerDurations layer()
{
  LayerDurations d;
  d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 5, d.c_us = 50;
  return d;
}

/** `plan` with every D and C split into send + recv hook, the recv kernels taking `d_recv_us` and `c_recv_us`. */
StepPlan with_hooks(StepPlan plan, double d_recv_us, double c_recv_us)
{
  for (UbatchCosts& u : plan.ubatches) {
    split_recv_hook(u.moe, OpKind::D, d_recv_us);
    split_recv_hook(u.moe, OpKind::C, c_recv_us);
  }
  return plan;
}

OpVertex find_op(const Schedule& s, OpKind k, int layer, int ub)
{
  for (OpVertex v = 0; v < s.num_ops(); ++v)
    if (s.ops[v].kind == k && s.ops[v].layer == layer && s.ops[v].ubatch == ub)
      return v;
  FAIL("no such op");
  return 0;
}

} // namespace

TEST_CASE("sim::recv hooks: a split keeps the collective's time, one launch each for send and recv", "[quick]")
{
  LayerDurations d     = layer();
  d.kernels_per_op     = 2;
  StepPlan plan        = with_hooks(synthetic_plan(ScheduleId::serial, 1, 0, 1, d), 8, 12);
  const UbatchCosts& u = plan.ubatches[0];
  const OpSpec* send   = u.find(true, OpKind::D);
  const OpSpec* recv   = u.find(true, OpKind::D_recv);
  REQUIRE(send);
  REQUIRE(recv);
  CHECK(send->duration_us == 0);
  CHECK(send->flight_us == Approx(22));
  CHECK(recv->duration_us == Approx(8));
  CHECK(send->kernels + recv->kernels == 2);
  CHECK(u.find(true, OpKind::C)->flight_us == Approx(38));
  CHECK(u.find(true, OpKind::C_recv)->duration_us == Approx(12));

  std::vector<OpSpec> ops = u.moe;
  set_collective_us(ops, OpKind::D, 100, 30); // a cluster rank's own figures
  CHECK(std::find_if(ops.begin(), ops.end(), [](const OpSpec& o) { return o.kind == OpKind::D; })->flight_us ==
        Approx(70));
  CHECK_THROWS_AS(set_collective_us(ops, OpKind::D, 10, 30), InternalError); // a recv longer than the collective
  std::vector<OpSpec> plain = synthetic_plan(ScheduleId::serial, 1, 0, 1, d).ubatches[0].moe;
  set_collective_us(plain, OpKind::C, 70, 30); // no hook: the collective lasts its whole time
  CHECK(std::find_if(plain.begin(), plain.end(), [](const OpSpec& o) { return o.kind == OpKind::C; })->duration_us ==
        70);
}

TEST_CASE("sim::recv hooks: DBO issues each recv on the other micro-batch's thread, in the documented order", "[quick]")
{
  const StepPlan plan  = with_hooks(synthetic_plan(ScheduleId::dbo, 3, 1, 2, layer()), 8, 12);
  const Schedule sched = build_schedule(plan);
  // Layer 1 (the first MoE layer): D1 send, A0_0, A1_0, D1 recv, D0 send, MLP_1, D0 recv, C1 send, S_1, MLP_0,
  // C1 recv, C0 send, S_0, A0_1 A1_1 (layer 2), C0 recv.
  const std::vector<std::pair<OpKind, int>> want = {
      {OpKind::D, 1},      {OpKind::A0, 0}, {OpKind::A1, 0}, {OpKind::D_recv, 1}, {OpKind::D, 0},      {OpKind::MLP, 1},
      {OpKind::D_recv, 0}, {OpKind::C, 1},  {OpKind::S, 1},  {OpKind::MLP, 0},    {OpKind::C_recv, 1}, {OpKind::C, 0},
      {OpKind::S, 0},      {OpKind::A0, 1}, {OpKind::A1, 1}, {OpKind::C_recv, 0}};
  const int first = sched.ops[find_op(sched, OpKind::D, 1, 1)].issue_index;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Op& op = sched.ops[sched.issue_order[static_cast<std::size_t>(first) + i]];
    INFO("issue position " << i);
    CHECK(op.kind == want[i].first);
    CHECK(op.ubatch == want[i].second);
    CHECK(op.host_thread == (is_recv_hook(op.kind) ? 1 - op.ubatch : op.ubatch));
    // Sends on the comm stream; a recv hook on the compute stream of the thread that runs it (vLLM's low-latency
    // prepare/finalize switches no stream), where it takes its time from compute.
    CHECK(op.stream == (is_comm_kind(op.kind) ? StreamId::comm : StreamId::compute));
  }
  // The experts read the recv hook's output, the next layer's attention the combine's recv.
  auto reads = [&](OpVertex consumer, OpVertex producer) {
    return boost::edge(producer, consumer, sched.graph->dag).second;
  };
  CHECK(reads(find_op(sched, OpKind::MLP, 1, 1), find_op(sched, OpKind::D_recv, 1, 1)));
  CHECK_FALSE(reads(find_op(sched, OpKind::MLP, 1, 1), find_op(sched, OpKind::D, 1, 1)));
  CHECK(reads(find_op(sched, OpKind::A0, 2, 0), find_op(sched, OpKind::C_recv, 1, 0)));
  // Serial: each recv right behind its send on the same stream.
  const Schedule serial = build_schedule(with_hooks(synthetic_plan(ScheduleId::serial, 2, 0, 1, layer()), 8, 12));
  const OpVertex d      = find_op(serial, OpKind::D, 0, 0);
  CHECK(serial.ops[serial.issue_order[static_cast<std::size_t>(serial.ops[d].issue_index) + 1]].kind == OpKind::D_recv);
}

TEST_CASE("sim::recv hooks: DeepSeek's and SGLang's decode orders run each recv on the compute stream, just before "
          "its reader",
          "[quick]")
{
  for (ScheduleId id : {ScheduleId::deepseek_decode, ScheduleId::sglang_tbo}) {
    INFO(schedule_name(id));
    const Schedule sched = build_schedule(with_hooks(synthetic_plan(id, 4, 1, 2, layer()), 8, 12));
    // Layer 1 (the first MoE layer; A0_0 A1_0 the prologue), compute stream: S_0 A0_1 D_0 recv MLP_0 A1_1 S_1 C_0 recv
    // A0_0(2) D_1 recv MLP_1 A1_0(2) C_1 recv.
    std::string got;
    for (OpVertex v : sched.stream_order[static_cast<int>(StreamId::compute)]) {
      const Op& op = sched.ops[v];
      const bool in_layer =
          op.layer == 1 || (op.layer == 2 && (op.kind == OpKind::A0 || op.kind == OpKind::A1) && op.ubatch == 0);
      if (in_layer)
        got += fmt::format("{}{}/{}", got.empty() ? "" : " ", op_kind_name(op.kind), op.ubatch);
    }
    CHECK(got == "A0/0 A1/0 S/0 A0/1 D_recv/0 MLP/0 A1/1 S/1 C_recv/0 A0/0 D_recv/1 MLP/1 A1/0 C_recv/1");
    // The sends stay on the comm stream, and the readers wait for the recv kernels.
    std::string comm;
    for (OpVertex v : sched.stream_order[static_cast<int>(StreamId::comm)])
      if (sched.ops[v].layer == 1)
        comm += fmt::format("{}{}/{}", comm.empty() ? "" : " ", op_kind_name(sched.ops[v].kind), sched.ops[v].ubatch);
    CHECK(comm == "D/0 C/0 D/1 C/1");
    CHECK(
        boost::edge(find_op(sched, OpKind::D_recv, 1, 0), find_op(sched, OpKind::MLP, 1, 0), sched.graph->dag).second);
    CHECK(boost::edge(find_op(sched, OpKind::C_recv, 1, 1), find_op(sched, OpKind::A0, 2, 1), sched.graph->dag).second);
  }
}

namespace {
struct SerialRun {
  double step_us, d_end, d_arrive, d_recv_start, c_arrive, c_end, busy_pct, d_flight_path, c_flight_path;
  int violations;
};
} // namespace

TEST_CASE("sim::recv hooks: the data flies off the stream, the recv starts at its landing (serial, closed form)",
          "[quick]")
{
  const LayerDurations d = layer();
  const StepPlan plain   = synthetic_plan(ScheduleId::serial, 1, 0, 1, d);
  const StepPlan hooked  = with_hooks(plain, 8, 12);
  const double plain_step =
      in_child<double>([&] { return TimelineEngine(build_schedule(plain), plain).run(1).step_time(); });
  const SerialRun r = in_child<SerialRun>([&] {
    const Schedule s   = build_schedule(hooked);
    const Timeline tl  = TimelineEngine(s, hooked).run(1);
    const Metrics m    = compute_metrics(s, tl);
    const OpRecord& dr = tl.ops[find_op(s, OpKind::D, 0, 0)];
    const OpRecord& cr = tl.ops[find_op(s, OpKind::C, 0, 0)];
    auto path          = [&](const char* k) { return m.critical_path_us.count(k) ? m.critical_path_us.at(k) : -1.0; };
    return SerialRun{tl.step_time(),
                     dr.end_us,
                     dr.arrive_us,
                     tl.ops[find_op(s, OpKind::D_recv, 0, 0)].start_us,
                     cr.arrive_us,
                     tl.ops[find_op(s, OpKind::C_recv, 0, 0)].end_us,
                     m.stream_busy_pct[static_cast<int>(StreamId::compute)],
                     path("D_flight"),
                     path("C_flight"),
                     static_cast<int>(timeline_violations(s, tl).size() + duration_violations(s, tl).size())};
  });
  CHECK(r.violations == 0);
  CHECK(r.d_end == Approx(d.a0_us + d.a1_us));         // the send kernel posts the writes and returns
  CHECK(r.d_arrive == Approx(d.a0_us + d.a1_us + 22)); // then 30 - 8 µs in flight
  CHECK(r.d_recv_start == Approx(r.d_arrive));         // the hook waits for the landing
  CHECK(r.c_end == Approx(r.c_arrive + 12));
  CHECK(r.step_us == Approx(plain_step).epsilon(1e-12)); // alone, a split collective takes as long as a whole one
  // Serial runs on one stream: it is busy with the compute ops and the two recv kernels, idle while data flies.
  CHECK(r.busy_pct == Approx(100.0 * (d.a0_us + d.a1_us + d.mlp_us + d.s_us + 8 + 12) / r.step_us));
  CHECK(r.d_flight_path == Approx(22));
  CHECK(r.c_flight_path == Approx(38));
}

TEST_CASE("sim::recv hooks: the max-plus replay equals the SimGrid run, every rank lands with the slowest (DBO)",
          "[quick][cluster]")
{
  std::vector<StepPlan> plans;
  for (int r = 0; r < 3; ++r) {
    LayerDurations d = layer();
    d.d_us += 25 * r; // rank 2 receives the most: the longest flights
    d.c_us += 40 * r;
    d.mlp_us += 9 * r;
    d.kernels_per_op     = 2;
    StepPlan p           = with_hooks(synthetic_plan(ScheduleId::dbo, 4, 1, 2, d), 6 + r, 9 + r);
    p.host.launch_cpu_us = 3; // eager: a recv hook waits for the other thread to issue it
    p.host.event_us      = 1;
    p.host.handoff_us    = 1;
    p.host.kernel_gap_us = 0.5;
    plans.push_back(p);
  }
  const Schedule sched = build_schedule(plans[0]);
  ClusterEngine engine(sched, plans);
  REQUIRE(engine.exact_replay_applies());
  const ClusterTimeline fast = engine.replay(2);
  const std::size_t n        = sched.num_ops();
  struct Figures {
    double step[2];
    double start[3][256], end[3][256], arrive[3][256];
  };
  REQUIRE(n <= 256);
  const Figures sim = in_child<Figures>([&] {
    const ClusterTimeline t = engine.run(2);
    Figures f{};
    for (int s = 0; s < 2; ++s)
      f.step[s] = t.step_time_us[static_cast<std::size_t>(s)];
    for (std::size_t c = 0; c < 3; ++c)
      for (std::size_t v = 0; v < n; ++v) {
        f.start[c][v]  = t.classes[c].ops[v].start_us;
        f.end[c][v]    = t.classes[c].ops[v].end_us;
        f.arrive[c][v] = t.classes[c].ops[v].arrive_us;
      }
    return f;
  });
  REQUIRE(sim.step[1] > 0);
  for (int s = 0; s < 2; ++s)
    CHECK(fast.step_time_us[static_cast<std::size_t>(s)] == Approx(sim.step[s]).epsilon(1e-9));
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t v = 0; v < n; ++v) {
      CHECK(fast.classes[c].ops[v].start_us == Approx(sim.start[c][v]).margin(1e-6));
      CHECK(fast.classes[c].ops[v].end_us == Approx(sim.end[c][v]).margin(1e-6));
      CHECK(fast.classes[c].ops[v].arrive_us == Approx(sim.arrive[c][v]).margin(1e-6));
    }
  // A collective lands for everyone when the slowest rank's data has: every class's recv hook starts after the
  // latest own send end + own flight over all classes (one step: every class's records start from the same instant);
  // a flight sent while the previous one is in the air starts when that one has landed.
  const ClusterTimeline one = engine.replay(1);
  double air_free           = 0;
  int queued                = 0;
  for (OpVertex v : sched.stream_order[static_cast<int>(StreamId::comm)]) {
    if (sched.ops[v].flight_us <= 0)
      continue;
    double latest = 0;
    for (std::size_t c = 0; c < 3; ++c) {
      const OpSpec* spec =
          plans[c].ubatches[static_cast<std::size_t>(sched.ops[v].ubatch)].find(true, sched.ops[v].kind);
      queued += one.classes[c].ops[v].end_us < air_free;
      latest = std::max(latest, std::max(one.classes[c].ops[v].end_us, air_free) + spec->flight_us);
    }
    for (std::size_t c = 0; c < 3; ++c)
      CHECK(one.classes[c].ops[v].arrive_us == Approx(latest).margin(1e-9));
    air_free = latest;
  }
  CHECK(queued > 0); // the recv hooks on the compute stream let a send leave while the other micro-batch's flies
}

TEST_CASE("sim::TimelineCheck: a recv hook that starts before its collective lands, or a flight too short", "[quick]")
{
  const StepPlan plan  = with_hooks(synthetic_plan(ScheduleId::serial, 1, 0, 1, layer()), 8, 12);
  const Schedule sched = build_schedule(plan);
  // A valid timeline: each op after the previous one's landing (or end).
  Timeline tl;
  tl.ops.resize(sched.num_ops());
  double t = 0;
  for (OpVertex v : sched.issue_order) {
    const Op& op = sched.ops[v];
    tl.ops[v]    = OpRecord{0, 0, t, t + op.duration_us, -1, -1};
    t += op.duration_us;
    if (op.flight_us > 0) {
      t += op.flight_us;
      tl.ops[v].arrive_us = t;
    }
  }
  tl.step_time_us = {t};
  REQUIRE(timeline_violations(sched, tl).empty());
  REQUIRE(duration_violations(sched, tl).empty());
  const OpVertex d = find_op(sched, OpKind::D, 0, 0);
  SECTION("the recv starts at the send's end, before the landing")
  {
    const OpVertex r   = find_op(sched, OpKind::D_recv, 0, 0);
    tl.ops[r].start_us = tl.ops[d].end_us;
    const auto v       = timeline_violations(sched, tl);
    REQUIRE(v.size() == 1);
    CHECK_THAT(v[0], Catch::Contains("D_recv(layer 0, ubatch 0)") && Catch::Contains("D(layer 0, ubatch 0) lands"));
  }
  SECTION("the data lands faster than its flight")
  {
    tl.ops[d].arrive_us -= 5;
    const auto v = duration_violations(sched, tl);
    REQUIRE(v.size() == 1);
    CHECK_THAT(v[0], Catch::Contains("faster than its flight 22"));
  }
}

/* Closed-form checks of the timeline engine on small hand-computed cases (synthetic op durations, no model).
 * One TEST_CASE per process: SimGrid runs one simulation per process (ctest runs each case on its own). */
#include "sim/engine/TimelineEngine.hpp"
#include "sim/output/Metrics.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>

using namespace dbosim::sim;

namespace {

constexpr double tol_us = 1e-3; // SimGrid's solver precision, in µs

// One layer's ops for one micro-batch: A0 10, A1 20, D 30, MLP 40, S 15, C 25 (µs); dense FFN 35.
LayerDurations hand_durations()
{
  LayerDurations d;
  d.a0_us        = 10;
  d.a1_us        = 20;
  d.d_us         = 30;
  d.mlp_us       = 40;
  d.s_us         = 15;
  d.c_us         = 25;
  d.dense_mlp_us = 35;
  return d;
}

LayerDurations scaled(LayerDurations d, double f)
{
  for (double* x : {&d.a0_us, &d.a1_us, &d.d_us, &d.mlp_us, &d.s_us, &d.c_us, &d.dense_mlp_us})
    *x *= f;
  return d;
}

struct Run {
  Schedule sched;
  Timeline tl;
  Metrics m;
};

Run replay(const StepPlan& plan)
{
  Run r{build_schedule(plan), {}, {}};
  TimelineEngine engine(r.sched, plan);
  r.tl = engine.run();
  r.m  = compute_metrics(r.sched, r.tl);
  return r;
}

const OpRecord& find(const Run& r, OpKind k, int layer, int ub)
{
  for (OpVertex v = 0; v < r.sched.num_ops(); ++v)
    if (r.sched.ops[v].kind == k && r.sched.ops[v].layer == layer && r.sched.ops[v].ubatch == ub)
      return r.tl.ops[v];
  FAIL("op not found");
  return r.tl.ops[0];
}

/** The 2-layer hand DBO plan with 20 SMs held by comm: every compute op runs 1.5x longer on its partition. */
StepPlan partitioned_dbo_plan()
{
  StepPlan plan = synthetic_plan(ScheduleId::dbo, 1, 0, 2, hand_durations());
  for (UbatchCosts& u : plan.ubatches)
    for (OpSpec& op : u.moe)
      op.partitioned_duration_us = op.duration_us * 1.5;
  plan.gpu.comm_sms      = 20;
  plan.gpu.comm_uses_sms = true;
  return plan;
}

} // namespace

TEST_CASE("sim::closed form: serial is the sum of its ops", "[quick]")
{
  // 1 dense + 2 MoE layers: (10+20+35) + 2*(10+20+30+40+15+25) = 65 + 280 = 345 µs.
  Run r = replay(synthetic_plan(ScheduleId::serial, 3, 1, 1, hand_durations()));
  CHECK(r.m.step_time_us == Approx(345).margin(tol_us));
  CHECK(r.m.overlap_us == Approx(0).margin(tol_us));
  CHECK(r.m.exposed_comm_us == Approx(2 * (30 + 25)).margin(tol_us));
  CHECK(r.m.per_layer_us.size() == 3);
  CHECK(r.m.per_layer_us[0] == Approx(65).margin(tol_us));
  CHECK(r.m.per_layer_us[2] == Approx(140).margin(tol_us));
  double path = 0;
  for (const auto& [kind, us] : r.m.critical_path_us)
    path += us;
  CHECK(path == Approx(345).margin(tol_us));
  CHECK(r.m.critical_path_us.at("C") == Approx(50).margin(tol_us));
}

TEST_CASE("sim::closed form: a piecewise-graph step pays its pieces' launches, eager kernels and boundary gaps",
          "[quick]")
{
  // Serial, 2 MoE layers of 4 kernels per op. A0 ends with one eager kernel (the attention op's KV write), A1 opens
  // with 3 (the rest of the attention op) and then launches the piece that runs to the next layer's KV write.
  // Host: 5 µs per eager launch, 2 µs per graph launch; GPU gaps: 0.5 per captured kernel, 1.5 per eager kernel,
  // 1 per piece boundary. Per layer on the GPU: A0 10 + 3*0.5 + 1.5 = 13; A1 20 + 0.5 + 3*1.5 + 1 = 26; D, MLP, S, C
  // 30/40/15/25 + 4*0.5 each = 118 in all: 157 per layer. Host: the step's first piece 2, A0 +5, A1 +3*5 + 2, the
  // rest 0: A0 of layer 0 issued at 7 (runs 7-20), A1 at 24: the GPU waits 4 µs for it. Layer 1 is issued long
  // before the GPU reaches it. Step: 7 + 157 + 4 + 157 = 325 µs.
  LayerDurations d = hand_durations();
  d.kernels_per_op = 4;
  StepPlan plan    = synthetic_plan(ScheduleId::serial, 2, 0, 1, d);
  for (OpSpec& op : plan.ubatches[0].moe) {
    if (op.kind == OpKind::A0)
      op.eager_kernels = 1;
    if (op.kind == OpKind::A1) {
      op.eager_kernels  = 3;
      op.graph_launches = 1;
    }
  }
  plan.host.piecewise           = true;
  plan.host.launch_cpu_us       = 5;
  plan.host.event_us            = 7; // captured in the pieces: never paid
  plan.host.graph_launch_us     = 2;
  plan.host.kernel_gap_us       = 0.5;
  plan.host.eager_kernel_gap_us = 1.5;
  plan.host.piece_gap_us        = 1;
  Run r                         = replay(plan);
  CHECK(r.m.step_time_us == Approx(325).margin(tol_us));
  CHECK(find(r, OpKind::A1, 0, 0).issue_us == Approx(24).margin(tol_us));
  CHECK(find(r, OpKind::A1, 0, 0).start_us == Approx(24).margin(tol_us));
  CHECK(find(r, OpKind::A1, 0, 0).end_us == Approx(50).margin(tol_us));
  CHECK(find(r, OpKind::A0, 1, 0).end_us == Approx(168 + 13).margin(tol_us));
}

TEST_CASE("sim::closed form: async combine saves min(S, C) per MoE layer", "[quick]")
{
  // Same layers as the serial case (345 µs); S=15 runs under C=25 on each of the 2 MoE layers: 345 - 2*15 = 315.
  Run r = replay(synthetic_plan(ScheduleId::async_combine, 3, 1, 1, hand_durations()));
  CHECK(r.m.step_time_us == Approx(345 - 2 * 15).margin(tol_us));
  CHECK(r.m.overlap_us == Approx(2 * 15).margin(tol_us));
  CHECK(r.m.stream_busy_pct[1] == Approx(100.0 * 2 * 25 / 315).margin(1e-3));
}

TEST_CASE("sim::closed form: async combine with a host ahead of the GPU still saves min(S, C)", "[quick]")
{
  // Eager, 1 µs per launch and per event. Host issue times (µs): A0 1, A1 2, MLP 3 (dense layer), A0 4, A1 5, D 6,
  // MLP 8 (+record), C 11 (+wait +record), S 12, A0 14 (+wait), A1 15, D 16, MLP 18, C 20, S 21: always ahead of the
  // GPU, so only the first launch is exposed: serial would take 1 + 345; async = 1 + 345 - 2*15 = 316.
  StepPlan plan           = synthetic_plan(ScheduleId::async_combine, 3, 1, 1, hand_durations());
  plan.host.launch_cpu_us = 1;
  plan.host.event_us      = 1;
  Run r                   = replay(plan);
  CHECK(r.m.step_time_us == Approx(1 + 345 - 2 * 15).margin(tol_us));
  CHECK(find(r, OpKind::C, 2, 0).issue_us == Approx(20).margin(tol_us));
}

TEST_CASE("sim::closed form: async combine on a host-bound step loses its launch gaps", "[quick]")
{
  // 100 µs per launch, 5 µs per event, 2 MoE layers of 10-40 µs ops: the GPU always waits for the host. Serial
  // launches 12 ops and ends with C: 12*100 + 25 = 1225 µs. Async adds 6 events (MLP record, C wait+record, A0 wait,
  // MLP record, C wait) before the last op, S: 12*100 + 6*5 + 15 = 1245 µs. The overlap is gone and the events cost.
  StepPlan plan           = synthetic_plan(ScheduleId::async_combine, 2, 0, 1, hand_durations());
  plan.host.launch_cpu_us = 100;
  plan.host.event_us      = 5;
  Run r                   = replay(plan);
  CHECK(r.m.step_time_us == Approx(12 * 100 + 6 * 5 + 15).margin(tol_us));
  CHECK(r.m.step_time_us > 12 * 100 + 25);
}

TEST_CASE("sim::closed form: 2-layer DBO step equals the documented order's makespan", "[quick]")
{
  // Both layers MoE, two identical micro-batches (durations above), free host. Issue order (docs/domain.md §3):
  //   prologue A0_1 A1_1 (layer 0); per layer: D1 A0_0 A1_0 D0 MLP_1 C1 S_1 MLP_0 C0 S_0 [A0_1 A1_1 of layer 1].
  // By hand, layer 0: A0_1 0-10, A1_1 10-30, D1 30-60 | A0_0 30-40, A1_0 40-60, D0 60-90, MLP_1 60-100,
  //   C1 100-125, S_1 100-115, MLP_0 115-155, C0 155-180, S_0 155-170,
  // layer 1: A0_1 170-180 (after C1 125, S_1 115, S_0 on the stream), A1_1 180-200, D1 200-230, A0_0 200-210,
  //   A1_0 210-230, D0 230-260, MLP_1 230-270, C1 270-295, S_1 270-285, MLP_0 285-325, C0 325-350, S_0 325-340.
  Run r = replay(synthetic_plan(ScheduleId::dbo, 2, 0, 2, hand_durations()));
  CHECK(r.m.step_time_us == Approx(350).margin(tol_us));
  CHECK(find(r, OpKind::D, 0, 1).start_us == Approx(30).margin(tol_us));
  CHECK(find(r, OpKind::MLP, 0, 0).start_us == Approx(115).margin(tol_us));
  CHECK(find(r, OpKind::A0, 1, 1).start_us == Approx(170).margin(tol_us));
  CHECK(find(r, OpKind::MLP, 1, 0).start_us == Approx(285).margin(tol_us));
  CHECK(find(r, OpKind::C, 1, 0).end_us == Approx(350).margin(tol_us));
  // Comm busy 4*(30+25) = 220 µs; exposed where the compute stream idles: 60-60? none; 325-350 beyond S_0 (340): 10.
  CHECK(r.m.comm_us == Approx(220).margin(tol_us));
  CHECK(r.m.exposed_comm_us == Approx(10).margin(tol_us));
}

TEST_CASE("sim::closed form: the ROCm host sync after dispatch and combine removes the DBO gain", "[quick]")
{
  // Micro-batch costs are half the full batch's (linear ops). The host blocks after every D and C until the comm
  // stream drains, so no comm runs under compute and the step is the sum of all micro-batch ops = the serial step.
  const LayerDurations half      = scaled(hand_durations(), 0.5);
  StepPlan plan                  = synthetic_plan(ScheduleId::dbo, 2, 0, 2, half);
  plan.host.host_sync_after_comm = true;
  Run r                          = replay(plan);
  const double serial_us         = 2 * (10 + 20 + 30 + 40 + 15 + 25); // one unsplit batch, 2 MoE layers
  CHECK(r.m.overlap_us == Approx(0).margin(tol_us));
  CHECK(r.m.step_time_us == Approx(serial_us).margin(tol_us));
  CHECK(r.m.critical_path_us.count("D") == 1);
}

TEST_CASE("sim::closed form: each host sync after a collective costs its round trip, the last one too", "[quick]")
{
  // Serial, 2 MoE layers, free launches: the host issues D, waits for it, syncs 3 µs, then issues MLP; likewise after
  // C. The GPU idles for each sync: 280 µs of ops + 4 x 3 µs. The last sync (after the final C) ends the step: the
  // work after the layers is launched when the host returns.
  StepPlan plan                  = synthetic_plan(ScheduleId::serial, 2, 0, 1, hand_durations());
  plan.host.host_sync_after_comm = true;
  plan.host.stream_sync_us       = 3;
  Run r                          = replay(plan);
  CHECK(r.m.step_time_us == Approx(280 + 4 * 3).margin(tol_us));
  CHECK(r.m.critical_path_us.at("host_sync") == Approx(4 * 3).margin(tol_us));
  double path = 0;
  for (const auto& [kind, us] : r.m.critical_path_us)
    path += us;
  CHECK(path == Approx(r.m.step_time_us).margin(tol_us));
}

TEST_CASE("sim::closed form: the same DBO step without the host sync beats serial", "[quick]")
{
  // Every duration halved, free host: the 2-layer DBO makespan halves too (350 / 2 = 175 µs), against 280 µs serial;
  // comm (220 / 2 = 110 µs) is covered by compute except its last 5 µs (10 / 2).
  Run r = replay(synthetic_plan(ScheduleId::dbo, 2, 0, 2, scaled(hand_durations(), 0.5)));
  CHECK(r.m.step_time_us == Approx(350 / 2.0).margin(tol_us));
  CHECK(r.m.overlap_us == Approx(110 - 5).margin(tol_us));
}

TEST_CASE("sim::closed form: DBO collectives that wait on the compute tail overlap only S and one combine", "[quick]")
{
  // vLLM's DeepEP high-throughput prepare/finalize with its event taken after the yield (StepPlan::
  // collectives_wait_compute_tail). Halved durations (A0 5, A1 10, D 15, MLP 20, S 7.5, C 12.5), 2 MoE layers, free
  // host. Issue per layer: A0_0 A1_0 A0_1 A1_1 D_0 S_0 MLP_0 D_1 S_1 MLP_1 C_0 C_1; D_0 waits A1_1, D_1 MLP_0, C_0
  // MLP_1. By hand, layer 0: A0_0 0-5, A1_0 5-15, A0_1 15-20, A1_1 20-30, D_0 30-45 | S_0 30-37.5, MLP_0 45-65,
  // D_1 65-80 | S_1 65-72.5, MLP_1 80-100, C_0 100-112.5, C_1 112.5-125 | layer 1's A0_0 112.5-117.5, A1_0 -127.5;
  // layer 1 repeats from A0_1 (after C_1) 127.5-132.5, A1_1 -142.5, D_0 142.5-157.5, MLP_0 -177.5, D_1 -192.5,
  // MLP_1 -212.5, C_0 -225, C_1 -237.5. The documented DBO order takes 175 µs, serial 280.
  StepPlan plan                      = synthetic_plan(ScheduleId::dbo, 2, 0, 2, scaled(hand_durations(), 0.5));
  plan.collectives_wait_compute_tail = true;
  Run r                              = replay(plan);
  CHECK(r.m.step_time_us == Approx(237.5).margin(tol_us));
  CHECK(find(r, OpKind::D, 0, 0).start_us == Approx(30).margin(tol_us));  // after micro-batch 1's attention
  CHECK(find(r, OpKind::D, 0, 1).start_us == Approx(65).margin(tol_us));  // after micro-batch 0's experts
  CHECK(find(r, OpKind::C, 0, 0).start_us == Approx(100).margin(tol_us)); // after micro-batch 1's experts
  CHECK(find(r, OpKind::A0, 1, 1).start_us == Approx(127.5).margin(tol_us));
  // Overlap: S beside its own D (4 x 7.5) and layer 1's A0_0 A1_0 beside layer 0's C_1 (12.5).
  CHECK(r.m.overlap_us == Approx(4 * 7.5 + 12.5).margin(tol_us));
}

TEST_CASE("sim::closed form: a slow eager host stretches the step", "[quick]")
{
  // 50 µs per launch, ops of 10-40 µs: the GPU always waits for the host. Serial, 2 MoE layers = 12 ops: the last
  // op is issued at 12*50 and runs C (25 µs): step = 625 µs.
  StepPlan plan           = synthetic_plan(ScheduleId::serial, 2, 0, 1, hand_durations());
  plan.host.launch_cpu_us = 50;
  Run r                   = replay(plan);
  CHECK(r.m.step_time_us == Approx(12 * 50 + 25).margin(tol_us));
  CHECK(r.m.critical_path_us.at("host_launch") == Approx(12 * 50).margin(tol_us));
  CHECK(r.m.stream_busy_pct[0] < 50);
}

TEST_CASE("sim::closed form: a full CUDA graph replays without per-kernel host cost", "[quick]")
{
  // Same slow host, cuda_graph full: one graph launch (50 µs) then the GPU runs back to back: 50 + 280 µs.
  StepPlan plan             = synthetic_plan(ScheduleId::serial, 2, 0, 1, hand_durations());
  plan.host.launch_cpu_us   = 50;
  plan.host.cuda_graph      = true;
  plan.host.graph_launch_us = 50;
  Run r                     = replay(plan);
  CHECK(r.m.step_time_us == Approx(50 + 280).margin(tol_us));
}

TEST_CASE("sim::closed form: SM partition confines compute, interference slows compute beside comm", "[quick]")
{
  // async_combine, 1 MoE layer, comm kernels use SMs without a partition: while C (25 µs) runs, S gets 1/f of the
  // GPU. f = 1.25: S (15 µs alone) runs entirely beside C at speed 0.8 and takes 15 * 1.25 = 18.75 µs < 25.
  StepPlan plan                = synthetic_plan(ScheduleId::async_combine, 1, 0, 1, hand_durations());
  plan.gpu.comm_uses_sms       = true;
  plan.gpu.interference_shared = 1.25;
  Run r                        = replay(plan);
  const OpRecord& s            = find(r, OpKind::S, 0, 0);
  CHECK(s.end_us - s.start_us == Approx(15 * 1.25).margin(tol_us));
  // The combine is not slowed: 10+20+30+40 = 100, then C 100-125 and S 100-118.75.
  CHECK(r.m.step_time_us == Approx(125).margin(tol_us));
}

TEST_CASE("sim::closed form: compute beside a comm kernel slows the comm by comm_with_compute", "[quick]")
{
  // async_combine, 1 MoE layer: C (25 µs alone) starts at 100 beside S (15 µs, not slowed: compute factor 1). With a
  // comm slowdown of 2, C makes 7.5 µs of progress while S runs, then 17.5 alone: it ends at 100 + 15 + 17.5.
  StepPlan plan                 = synthetic_plan(ScheduleId::async_combine, 1, 0, 1, hand_durations());
  plan.gpu.comm_uses_sms        = true;
  plan.gpu.comm_slowdown_shared = 2;
  Run r                         = replay(plan);
  const OpRecord& c             = find(r, OpKind::C, 0, 0);
  const OpRecord& s             = find(r, OpKind::S, 0, 0);
  CHECK(c.start_us == Approx(100).margin(tol_us));
  CHECK(c.end_us == Approx(132.5).margin(tol_us));
  CHECK(s.end_us - s.start_us == Approx(15).margin(tol_us));
  CHECK(r.m.step_time_us == Approx(132.5).margin(tol_us));
}

TEST_CASE("sim::closed form: a comm kernel that needs whole SMs starts when the running compute op ends", "[quick]")
{
  // async_combine, 1 MoE layer: C and S are both ready at 100. C's CTAs need whole SMs, so S (ready at the same
  // instant) takes the GPU and C gets its SMs when S ends at 115: C ends at 140. S runs alone, not slowed by C's
  // interference (1.25); C's record still starts at 100 (the comm stream reached it: what the testbed measures).
  StepPlan plan                 = synthetic_plan(ScheduleId::async_combine, 1, 0, 1, hand_durations());
  plan.gpu.comm_uses_sms        = true;
  plan.gpu.interference_shared  = 1.25;
  plan.gpu.comm_needs_whole_sms = true;
  Run r                         = replay(plan);
  const OpRecord& c             = find(r, OpKind::C, 0, 0);
  const OpRecord& s             = find(r, OpKind::S, 0, 0);
  CHECK(s.end_us - s.start_us == Approx(15).margin(tol_us));
  CHECK(c.start_us == Approx(100).margin(tol_us));
  CHECK(c.end_us == Approx(140).margin(tol_us));
  CHECK(r.m.step_time_us == Approx(140).margin(tol_us));
}

TEST_CASE("sim::closed form: whole-SM comm kernels do not wait for compute inside an SM partition", "[quick]")
{
  // The DBO partition case above with comm_needs_whole_sms set: the comm side has its own SMs, so D1 still starts
  // at the end of A1_1 and runs its 30 µs while A0_0 runs beside it (same numbers as without the flag).
  StepPlan plan                 = partitioned_dbo_plan();
  plan.gpu.comm_needs_whole_sms = true;
  Run r                         = replay(plan);
  const OpRecord& a1            = find(r, OpKind::A1, 0, 1);
  const OpRecord& d1            = find(r, OpKind::D, 0, 1);
  CHECK(d1.start_us == Approx(a1.end_us).margin(tol_us));
  CHECK(d1.end_us - d1.start_us == Approx(30).margin(tol_us));
}

TEST_CASE("sim::closed form: SM partition runs compute at its partitioned duration", "[quick]")
{
  // DBO with 20 of 132 SMs held by comm; every compute op's partitioned duration is 1.5x its full-GPU one, and the
  // partition applies for the whole step (it is set for the DBO region), comm runs at its fabric time.
  Run r              = replay(partitioned_dbo_plan());
  const OpRecord& a0 = find(r, OpKind::A0, 0, 1);
  CHECK(a0.end_us - a0.start_us == Approx(15).margin(tol_us));
  const OpRecord& d1 = find(r, OpKind::D, 0, 1);
  CHECK(d1.end_us - d1.start_us == Approx(30).margin(tol_us));
  // A0_0 (15 µs partitioned) runs entirely beside D1: it is not slowed further (interference factor 1).
  const OpRecord& a00 = find(r, OpKind::A0, 0, 0);
  CHECK(a00.end_us - a00.start_us == Approx(15).margin(tol_us));
}

TEST_CASE("sim::closed form: a fast eager host hides its launches, kernel gaps stay on the GPU", "[quick]")
{
  // 0.5 µs per launch, 1 µs eager GPU gap per kernel, 12 single-kernel ops of 280 µs in all: only the first launch
  // is exposed, every gap is paid: 0.5 + 280 + 12 = 292.5 µs. (A full graph pays its own gap, kernel_gap_us: not
  // this one.)
  StepPlan plan                 = synthetic_plan(ScheduleId::serial, 2, 0, 1, hand_durations());
  plan.host.launch_cpu_us       = 0.5;
  plan.host.kernel_gap_us       = 0.25;
  plan.host.eager_kernel_gap_us = 1;
  Run r                         = replay(plan);
  CHECK(r.m.step_time_us == Approx(0.5 + 280 + 12).margin(tol_us));
}

TEST_CASE("sim::TimelineEngine: a second simulation in one process is a clear error, not an abort", "[quick]")
{
  const StepPlan plan  = synthetic_plan(ScheduleId::serial, 1, 0, 1, hand_durations());
  const Schedule sched = build_schedule(plan);
  TimelineEngine engine(sched, plan);
  CHECK(engine.run().step_time() == Approx(140).margin(tol_us));
  CHECK_THROWS_WITH(engine.run(), Catch::Contains("one simulation per process"));
}

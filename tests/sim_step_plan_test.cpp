/* StepPlanBuilder: vLLM's DBO rules and the engine settings derived from a Scenario, with synthetic op costs. */
#include "base/InputError.hpp"
#include "config/EngineTable.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dbosim;
using namespace dbosim::sim;
using models::OpKind;

namespace {

// Costs linear in tokens with a latency floor; compute ops on s SMs take sm_count/s times longer.
CostSource linear_costs(int sm_count)
{
  return CostSource{
      [](const models::StepShape& shape, bool moe, int) {
        models::LayerCosts lc;
        lc.moe  = moe;
        auto op = [&](OpKind k, double per_token_us) {
          models::OpCost c;
          c.kind        = k;
          c.duration_us = 5 + per_token_us * shape.tokens;
          c.kernels     = 2;
          lc.ops.push_back(c);
        };
        op(OpKind::A0, 0.05);
        op(OpKind::A1, 0.1);
        if (moe)
          op(OpKind::D, 0.2);
        op(OpKind::MLP, 0.1);
        if (moe) {
          op(OpKind::S, 0.03);
          op(OpKind::C, 0.3);
        }
        return lc;
      },
      [sm_count](const models::OpCost& c, int sms) { return c.duration_us * sm_count / sms; },
      {}, // no separate MLP cost: the layer's
      {}, // no work outside the layers
  };
}

Scenario scenario(int tokens)
{
  Scenario s;
  s.file                      = "test.yaml";
  s.model.name                = "toy";
  s.model.num_layers          = 4;
  s.model.first_k_dense       = 1;
  s.hw.name                   = "toy-gpu";
  s.hw.sm_count               = 132;
  s.hw.launch_cpu_us          = 4;
  s.hw.event_us               = 1;
  s.hw.stream_sync_us         = 10;
  s.hw.graph_replay_kernel_us = 0.5;
  s.step.phase                = models::Phase::decode;
  s.step.tokens               = tokens;
  s.step.batch                = tokens;
  s.step.context_len          = 4096;
  s.overlap.enable_dbo        = true;
  s.parallel.backend          = models::All2AllBackend::deepep_low_latency;
  s.execution.cuda_graph      = CudaGraphMode::full;
  return s;
}

/** linear_costs that records every MoE layer's micro-batch shape into `seen`. */
CostSource recording_costs(std::vector<models::StepShape>& seen)
{
  CostSource costs = linear_costs(132);
  auto layer       = costs.layer;
  costs.layer      = [&seen, layer](const models::StepShape& s, bool moe, int sms) {
    if (moe)
      seen.push_back(s);
    return layer(s, moe, sms);
  };
  return costs;
}

/** A 1024-token mixed prefill step with 100 requests decoding at KV length 3000 (the prompt part set by the test). */
Scenario mixed_scenario()
{
  Scenario sc                = scenario(1024);
  sc.step.phase              = models::Phase::prefill;
  sc.step.decode_tokens      = 100;
  sc.step.decode_batch       = 100;
  sc.step.decode_context_len = 3000;
  return sc;
}

bool has_note(const StepPlan& p, const std::string& word)
{
  return std::any_of(p.notes.begin(), p.notes.end(),
                     [&](const std::string& n) { return n.find(word) != std::string::npos; });
}

} // namespace

TEST_CASE("sim::StepPlanBuilder: DBO splits at padded/2 only from the phase's threshold", "[quick]")
{
  SECTION("below the decode threshold: unsplit, serial")
  {
    StepPlan p = build_step_plan(scenario(31), scenario(31).step, linear_costs(132));
    CHECK(p.num_ubatches() == 1);
    CHECK(p.schedule == ScheduleId::serial);
    CHECK(has_note(p, "threshold"));
  }
  SECTION("at the threshold: two micro-batches of padded/2")
  {
    StepPlan p = build_step_plan(scenario(33), scenario(33).step, linear_costs(132));
    REQUIRE(p.num_ubatches() == 2);
    CHECK(p.schedule == ScheduleId::dbo);
    CHECK(p.ubatches[0].tokens == 16);
    CHECK(p.ubatches[1].tokens == 17);
    CHECK(p.ubatches[1].find(true, OpKind::D)->duration_us == Approx(5 + 0.2 * 17));
    CHECK(p.ubatches[0].find(false, OpKind::D) == nullptr); // dense layers have no all-to-all
  }
  SECTION("prefill uses the prefill threshold (512)")
  {
    Scenario s   = scenario(500);
    s.step.phase = models::Phase::prefill;
    CHECK(build_step_plan(s, s.step, linear_costs(132)).num_ubatches() == 1);
    s.step.tokens = 512;
    CHECK(build_step_plan(s, s.step, linear_costs(132)).num_ubatches() == 2);
  }
}

TEST_CASE("sim::StepPlanBuilder: DP padding and dummy micro-batches", "[quick]")
{
  PlanOptions opt;
  opt.max_tokens_across_dp = 64; // another DP rank has 64 tokens: this one pads to 64 and splits
  StepPlan p               = build_step_plan(scenario(10), scenario(10).step, linear_costs(132), opt);
  REQUIRE(p.num_ubatches() == 2);
  CHECK(p.ubatches[0].tokens == 32);
  CHECK(p.ubatches[0].real_tokens == 10);
  CHECK(p.ubatches[1].tokens == 32);
  CHECK(p.ubatches[1].real_tokens == 0);
  CHECK(has_note(p, "dummy"));
  // The dummy still pays its collectives: the same cost as the real micro-batch of the same padded size.
  CHECK(p.ubatches[1].find(true, OpKind::C)->duration_us == p.ubatches[0].find(true, OpKind::C)->duration_us);
}

TEST_CASE("sim::StepPlanBuilder: async combine is forced synchronous under DBO", "[quick]")
{
  Scenario s              = scenario(64);
  s.overlap.async_combine = true;
  StepPlan p              = build_step_plan(s, s.step, linear_costs(132));
  CHECK(p.schedule == ScheduleId::dbo);
  CHECK(has_note(p, "forced synchronous"));
  s.overlap.enable_dbo = false;
  CHECK(build_step_plan(s, s.step, linear_costs(132)).schedule == ScheduleId::async_combine);
}

TEST_CASE("sim::StepPlanBuilder: CUDA graphs only for uniform decode", "[quick]")
{
  Scenario s = scenario(64);
  CHECK(build_step_plan(s, s.step, linear_costs(132)).host.cuda_graph);
  s.step.phase  = models::Phase::prefill;
  s.step.tokens = 1024;
  StepPlan p    = build_step_plan(s, s.step, linear_costs(132));
  CHECK_FALSE(p.host.cuda_graph);
  CHECK(has_note(p, "eager"));
}

TEST_CASE("sim::StepPlanBuilder: SM partition for DeepEP high-throughput under DBO only", "[quick]")
{
  Scenario s                                      = scenario(64);
  s.parallel.backend                              = models::All2AllBackend::deepep_high_throughput;
  s.overlap.dbo_comm_sms                          = 20;
  s.hw.interference.compute_with_comm             = 1.2;
  s.hw.interference.compute_with_comm_partitioned = 1.05;
  s.hw.interference.comm_with_compute             = 1.3;
  s.hw.interference.comm_with_compute_partitioned = 1.1;
  StepPlan p                                      = build_step_plan(s, s.step, linear_costs(132));
  CHECK(p.gpu.comm_sms == 20);
  CHECK(p.gpu.comm_uses_sms);
  CHECK(p.gpu.interference_partitioned == 1.05);
  CHECK(p.gpu.comm_slowdown_shared == 1.3);
  CHECK(p.gpu.comm_slowdown_partitioned == 1.1);
  CHECK(p.gpu.comm_needs_whole_sms); // DeepEP high-throughput: one CTA per SM
  const OpSpec* mlp = p.ubatches[0].find(true, OpKind::MLP);
  CHECK(mlp->partitioned_duration_us == Approx(mlp->duration_us * 132 / 112));
  CHECK(p.ubatches[0].find(true, OpKind::D)->partitioned_duration_us ==
        p.ubatches[0].find(true, OpKind::D)->duration_us);

  SECTION("low-latency kernels hold no SMs")
  {
    s.parallel.backend = models::All2AllBackend::deepep_low_latency;
    StepPlan ll        = build_step_plan(s, s.step, linear_costs(132));
    CHECK_FALSE(ll.gpu.comm_needs_whole_sms);
    CHECK(ll.gpu.comm_sms == 0);
    CHECK_FALSE(ll.gpu.comm_uses_sms);
  }
  SECTION("the ROCm host sync forces comm SMs to 0 and the step eager")
  {
    s.execution.host_sync_after_comm = true;
    StepPlan r                       = build_step_plan(s, s.step, linear_costs(132));
    CHECK(r.gpu.comm_sms == 0);
    CHECK(r.host.host_sync_after_comm);
    CHECK_FALSE(r.host.cuda_graph);
  }
  SECTION("no partition without DBO")
  {
    s.overlap.enable_dbo = false;
    CHECK(build_step_plan(s, s.step, linear_costs(132)).gpu.comm_sms == 0);
  }
  SECTION("a platform whose rule forbids the partition (vLLM on ROCm) holds no comm SMs")
  {
    s.hw.platform.stack                   = models::Platform::rocm;
    s.hw.platform.deepep_ht_dbo_partition = false;
    StepPlan r                            = build_step_plan(s, s.step, linear_costs(132));
    CHECK(r.gpu.comm_sms == 0);
    CHECK(has_note(r, "platform.deepep_ht_dbo_partition"));
  }
}

TEST_CASE("sim::StepPlanBuilder: DeepEP low-latency under DBO runs D and C as send + recv hook", "[quick]")
{
  // The cost model separates each collective's receive kernel (a quarter of it here).
  CostSource costs = linear_costs(132);
  auto layer       = costs.layer;
  costs.layer      = [layer](const models::StepShape& shape, bool moe, int sms) {
    models::LayerCosts lc = layer(shape, moe, sms);
    for (models::OpCost& c : lc.ops)
      if (c.kind == OpKind::D || c.kind == OpKind::C)
        c.recv_us = 0.25 * c.duration_us;
    return lc;
  };
  Scenario s       = scenario(64);
  s.parallel.ep    = 8;
  const StepPlan p = build_step_plan(s, s.step, costs);
  REQUIRE(p.num_ubatches() == 2);
  CHECK(has_note(p, "recv hook"));
  for (const UbatchCosts& u : p.ubatches) {
    const OpSpec* d  = u.find(true, OpKind::D);
    const OpSpec* dr = u.find(true, OpKind::D_recv);
    REQUIRE(dr);
    REQUIRE(u.find(true, OpKind::C_recv));
    const double whole = 5 + 0.2 * u.tokens; // linear_costs' D
    CHECK(d->flight_us == Approx(0.75 * whole));
    CHECK(dr->duration_us == Approx(0.25 * whole));
    CHECK(d->kernels + dr->kernels == 2);
    CHECK(u.find(false, OpKind::D_recv) == nullptr); // dense layers have no collective
  }
  SECTION("no hooks without DBO (vLLM runs the whole kernel), nor for the high-throughput kernels")
  {
    s.overlap.enable_dbo = false;
    CHECK(build_step_plan(s, s.step, costs).ubatches[0].find(true, OpKind::D_recv) == nullptr);
    s.overlap.enable_dbo = true;
    s.parallel.backend   = models::All2AllBackend::deepep_high_throughput;
    const StepPlan ht    = build_step_plan(s, s.step, costs);
    CHECK(ht.ubatches[0].find(true, OpKind::D_recv) == nullptr);
    CHECK(ht.ubatches[0].find(true, OpKind::D)->flight_us == 0);
  }
}

TEST_CASE("sim::StepPlanBuilder: overlap.schedule runs the steps with its micro-batch count", "[quick]")
{
  SECTION("a two-micro-batch schedule for the steps DBO splits")
  {
    Scenario s          = scenario(64);
    s.overlap.schedule  = ScheduleId::deepseek_decode;
    const StepPlan plan = build_step_plan(s, s.step, linear_costs(132));
    CHECK(plan.schedule == ScheduleId::deepseek_decode);
    CHECK(plan.num_ubatches() == 2);
    CHECK_FALSE(has_note(plan, "overlap.schedule"));
  }
  SECTION("below the threshold the step runs unsplit, by vLLM's rules, and says so")
  {
    Scenario s          = scenario(16);
    s.overlap.schedule  = ScheduleId::deepseek_decode;
    const StepPlan plan = build_step_plan(s, s.step, linear_costs(132));
    CHECK(plan.schedule == ScheduleId::serial);
    CHECK(has_note(plan, "overlap.schedule deepseek_decode runs 2 micro-batch(es), this step 1: serial"));
  }
  SECTION("a one-micro-batch schedule for the unsplit steps")
  {
    Scenario s              = scenario(16);
    s.overlap.schedule      = ScheduleId::async_combine;
    s.overlap.async_combine = false;
    CHECK(build_step_plan(s, s.step, linear_costs(132)).schedule == ScheduleId::async_combine);
    s.step.tokens = s.step.batch = 64; // split: DBO's rule
    CHECK(build_step_plan(s, s.step, linear_costs(132)).schedule == ScheduleId::dbo);
  }
  SECTION("--schedule overrides it")
  {
    Scenario s         = scenario(64);
    s.overlap.schedule = ScheduleId::deepseek_decode;
    PlanOptions opt;
    opt.schedule = "deepseek_prefill";
    CHECK(build_step_plan(s, s.step, linear_costs(132), opt).schedule == ScheduleId::deepseek_prefill);
  }
}

TEST_CASE("sim::StepPlanBuilder: bad requests are InputErrors naming the key and the valid values", "[quick]")
{
  Scenario s = scenario(64);
  PlanOptions opt;
  opt.schedule = "tbo";
  CHECK_THROWS_WITH(build_step_plan(s, s.step, linear_costs(132), opt),
                    Catch::Contains("schedule") && Catch::Contains("deepseek_decode"));
  opt.schedule = "async_combine"; // needs one micro-batch, the step has two: the valid ones are the table's two
  std::string two;                // the table's two-micro-batch rows, in its order
  for (const ScheduleTraits& t : schedule_traits)
    if (t.num_ubatches == 2)
      two += (two.empty() ? "" : ", ") + std::string(t.name);
  CHECK_THROWS_WITH(build_step_plan(s, s.step, linear_costs(132), opt),
                    Catch::Contains("needs 1 micro-batch(es); this step has 2") &&
                        Catch::Contains("(valid: " + two + ")"));
  CHECK(two.find("dbo") != std::string::npos);
  CHECK(two.find("serial") == std::string::npos);
  opt.schedule           = "";
  s.overlap.dbo_comm_sms = 132;
  CHECK_THROWS_WITH(build_step_plan(s, s.step, linear_costs(132), opt), Catch::Contains("dbo_comm_sms"));
  s.overlap.dbo_comm_sms = 20;
  s.overlap.ubatch_size  = 4;
  s.overlap.enable_dbo   = false;
  CHECK_THROWS_WITH(build_step_plan(s, s.step, linear_costs(132), opt), Catch::Contains("ubatch_size"));
}

TEST_CASE("sim::StepPlanBuilder: no split when another DP rank does not reach its DBO threshold", "[quick]")
{
  PlanOptions opt;
  opt.dp_ranks_agree_ubatch = false; // vLLM's coordinate_batch_across_dp: all DP ranks micro-batch or none
  const StepPlan p          = build_step_plan(scenario(64), scenario(64).step, linear_costs(132), opt);
  CHECK(p.num_ubatches() == 1);
  CHECK(has_note(p, "every rank runs unsplit"));
  CHECK(build_step_plan(scenario(64), scenario(64).step, linear_costs(132)).num_ubatches() == 2);
}

TEST_CASE("sim::StepPlanBuilder: vLLM 0.11's DeepEP high-throughput DBO collectives wait on the compute tail",
          "[quick]")
{
  Scenario s         = scenario(64);
  s.parallel.ep      = 8;
  s.parallel.backend = models::All2AllBackend::deepep_high_throughput;
  s.engine           = find_engine("vllm@0.11");
  REQUIRE(s.engine != nullptr);
  StepPlan p = build_step_plan(s, s.step, linear_costs(132));
  CHECK(p.schedule == ScheduleId::dbo);
  CHECK(p.collectives_wait_compute_tail);
  CHECK(has_note(p, "queued before it"));

  SECTION("a vLLM row with the event taken before the yield")
  {
    s.engine = find_engine("vllm@2026-09");
    REQUIRE(s.engine != nullptr);
    CHECK_FALSE(build_step_plan(s, s.step, linear_costs(132)).collectives_wait_compute_tail);
  }
  SECTION("DeepEP low-latency's prepare/finalize")
  {
    s.parallel.backend = models::All2AllBackend::deepep_low_latency;
    CHECK_FALSE(build_step_plan(s, s.step, linear_costs(132)).collectives_wait_compute_tail);
  }
  SECTION("another engine's schedule")
  {
    s.engine = find_engine("sglang");
    REQUIRE(s.engine != nullptr);
    CHECK_FALSE(build_step_plan(s, s.step, linear_costs(132)).collectives_wait_compute_tail);
  }
  SECTION("no DBO")
  {
    s.overlap.enable_dbo = false;
    CHECK_FALSE(build_step_plan(s, s.step, linear_costs(132)).collectives_wait_compute_tail);
  }
}

TEST_CASE("sim::StepPlanBuilder: a mixed step's DBO slices carry its decoding requests first", "[quick]")
{
  std::vector<models::StepShape> seen;
  const CostSource costs = recording_costs(seen);
  Scenario sc            = mixed_scenario();
  sc.step.batch          = 101;
  sc.step.context_len    = 1924; // one prompt: 924 new tokens after 1000 cached
  const StepPlan p       = build_step_plan(sc, sc.step, costs);
  REQUIRE(p.num_ubatches() == 2);
  REQUIRE(seen.size() == 2);
  // Slice 0: the 100 decodes and the prompt's first 412 tokens (context 1000 + 412).
  CHECK(seen[0].phase == models::Phase::prefill);
  CHECK(seen[0].tokens == 512);
  CHECK(seen[0].decode_tokens == 100);
  CHECK(seen[0].decode_batch == 100);
  CHECK(seen[0].decode_context_len == 3000);
  CHECK(seen[0].batch == 101);
  CHECK(seen[0].context_len == 1412);
  // Slice 1: the prompt's last 512 tokens over its whole context, no decode part.
  CHECK(seen[1].tokens == 512);
  CHECK(seen[1].decode_batch == 0);
  CHECK(seen[1].batch == 1);
  CHECK(seen[1].context_len == 1924);

  // More decode tokens than a slice holds: the first slice is a uniform decode batch.
  seen.clear();
  sc.step.batch         = 601;
  sc.step.decode_tokens = 600;
  sc.step.decode_batch  = 600;
  sc.step.context_len   = 1424;
  const StepPlan q      = build_step_plan(sc, sc.step, costs);
  REQUIRE(q.num_ubatches() == 2);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].phase == models::Phase::decode);
  CHECK(seen[0].batch == 512);
  CHECK(seen[0].context_len == 3000);
  CHECK(seen[0].decode_batch == 0);
  CHECK(seen[1].phase == models::Phase::prefill);
  CHECK(seen[1].decode_tokens == 88);
  CHECK(seen[1].batch == 88 + 1);
}

TEST_CASE("sim::StepPlanBuilder: a mixed step's slice keeps enough prompt requests to hold its prompt tokens",
          "[quick]")
{
  std::vector<models::StepShape> seen;
  const CostSource costs = recording_costs(seen);
  Scenario sc            = mixed_scenario();
  sc.step.batch          = 103; // three prompts of 308 new tokens each at a mean KV length of 400
  sc.step.context_len    = 400;
  REQUIRE(build_step_plan(sc, sc.step, costs).num_ubatches() == 2);
  REQUIRE(seen.size() == 2);
  // Slice 0 holds 412 prompt tokens: in proportion 3 x 412 / 924 = 1.3 requests, but 412 tokens need two requests of
  // at most 400 each.
  CHECK(seen[0].batch - seen[0].decode_batch == 2);
  CHECK(seen[1].batch == 2);
}

TEST_CASE("sim::StepPlanBuilder: an eager kernel costs the host its launch and the engine's Python", "[quick]")
{
  Scenario s            = scenario(64);
  s.hw.launch_cpu_us    = 3.5;
  s.hw.python_launch_us = 70;
  s.step.phase          = models::Phase::prefill;
  s.step.tokens         = 1024;
  const StepPlan eager  = build_step_plan(s, s.step, linear_costs(132));
  REQUIRE_FALSE(eager.host.cuda_graph);
  CHECK(eager.host.launch_cpu_us == 73.5);
  CHECK_FALSE(has_note(eager, "python_launch"));
  // under a full graph nothing is launched kernel by kernel: no note even when the key is absent
  Scenario graphed            = scenario(64);
  graphed.hw.python_launch_us = -1;
  CHECK_FALSE(has_note(build_step_plan(graphed, graphed.step, linear_costs(132)), "python_launch"));
  // a profile without the key: the C++ launch only, and the plan says so
  s.hw.python_launch_us    = -1;
  const StepPlan no_python = build_step_plan(s, s.step, linear_costs(132));
  CHECK(no_python.host.launch_cpu_us == 3.5);
  CHECK(has_note(no_python, "has no host.python_launch"));
}

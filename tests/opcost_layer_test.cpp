#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/All2AllModel.hpp"
#include "models/AttentionOps.hpp"
#include "models/CommOps.hpp"
#include "models/OpCost.hpp"
#include "opcost_test_support.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>
#include <vector>

using namespace dbosim::models;

namespace {
std::vector<OpKind> kinds(const LayerCosts& lc)
{
  std::vector<OpKind> out;
  for (const auto& op : lc.ops)
    out.push_back(op.kind);
  return out;
}

ParallelSpec ep8()
{
  ParallelSpec p;
  p.dp = 8, p.ep = 8, p.tp = 1;
  p.backend = All2AllBackend::deepep_low_latency;
  return p;
}

/** The shipped H800 link facts (D and C need some). */
CommSetup test_comm()
{
  static const NetworkFacts net = dbosim::load_network_facts("h800");
  CommSetup c;
  c.net = &net;
  return c;
}

/** How many different token counts `shapes` hold. */
std::size_t distinct_tokens(const std::vector<StepShape>& shapes)
{
  std::set<int> tokens;
  for (const StepShape& s : shapes)
    tokens.insert(s.tokens);
  return tokens.size();
}

StepShape decode(int tokens, int context)
{
  StepShape s;
  s.phase = Phase::decode, s.tokens = tokens, s.batch = tokens, s.context_len = context;
  return s;
}
} // namespace

TEST_CASE("models::layer_costs: which ops a layer has", "[quick]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  const ModelSpec qw = dbosim::load_model_zoo("qwen3-235b-a22b");

  SECTION("MoE layer with a shared expert: A0 A1 D MLP S C")
  {
    const LayerCosts lc = layer_costs(v3, hw, ep8(), decode(64, 4096), true, test_comm());
    CHECK(lc.moe);
    CHECK(kinds(lc) == std::vector<OpKind>{OpKind::A0, OpKind::A1, OpKind::D, OpKind::MLP, OpKind::S, OpKind::C});
  }
  SECTION("dense layer: no D, no C, no S; its MLP is the dense FFN")
  {
    const LayerCosts lc = layer_costs(v3, hw, ep8(), decode(64, 4096), false, test_comm());
    CHECK_FALSE(lc.moe);
    CHECK(kinds(lc) == std::vector<OpKind>{OpKind::A0, OpKind::A1, OpKind::MLP});
    CHECK(lc.find(OpKind::D) == nullptr);
    CHECK(lc.find(OpKind::C) == nullptr);
    // dense FFN weights: gate_up 2 x 18432 x 7168 + down 7168 x 18432, fp8
    CHECK(lc.find(OpKind::MLP)->weight_bytes == Approx(3.0 * 18432 * 7168));
  }
  SECTION("model without a shared expert: no S")
  {
    const LayerCosts lc = layer_costs(qw, hw, ep8(), decode(64, 4096), true, test_comm());
    CHECK(kinds(lc) == std::vector<OpKind>{OpKind::A0, OpKind::A1, OpKind::D, OpKind::MLP, OpKind::C});
    CHECK(lc.find(OpKind::S) == nullptr);
  }
  SECTION("ep = 1: every expert is local, no all-to-all")
  {
    ParallelSpec single;
    const LayerCosts lc = layer_costs(qw, hw, single, decode(64, 4096), true, test_comm());
    CHECK(kinds(lc) == std::vector<OpKind>{OpKind::A0, OpKind::A1, OpKind::MLP});
  }
  SECTION("kernel launches per op (MLA decode)")
  {
    const LayerCosts lc = layer_costs(v3, hw, ep8(), decode(64, 4096), true, test_comm());
    // norm, FP8 quant, fused q_a/kv_a, 2 latent norms, FP8 quant, q_b, rope, cache write
    CHECK(lc.find(OpKind::A0)->kernels == 9);
    // W_UK, FlashMLA split-KV, FlashMLA combine, W_UV, FP8 quant, o_proj, post-attention norm, gate, top-k
    CHECK(lc.find(OpKind::A1)->kernels == 9);
    CHECK(lc.find(OpKind::MLP)->kernels == 3); // masked grouped gate_up, SiLU-mul + FP8 quant, grouped down
    CHECK(lc.find(OpKind::S)->kernels == 5);   // quant, gate_up, SiLU-mul, quant, down
    CHECK(lc.find(OpKind::D)->kernels == 2);   // low-latency: send + receive hook
    CHECK(lc.find(OpKind::C)->kernels == 2);
  }
  SECTION("same inputs, same outputs")
  {
    const LayerCosts a = layer_costs(v3, hw, ep8(), decode(64, 4096), true, test_comm());
    const LayerCosts b = layer_costs(v3, hw, ep8(), decode(64, 4096), true, test_comm());
    REQUIRE(a.ops.size() == b.ops.size());
    for (size_t i = 0; i < a.ops.size(); ++i) {
      CHECK(a.ops[i].duration_us == b.ops[i].duration_us);
      CHECK(a.ops[i].method == b.ops[i].method);
    }
  }
}

TEST_CASE("models::layer_costs: two micro-batches read the weights twice", "[quick]")
{
  const HwProfile hw     = dbosim::test::h200_like();
  const ModelSpec v3     = dbosim::load_model_zoo("deepseek-v3");
  const LayerCosts whole = layer_costs(v3, hw, ep8(), decode(32, 4096), true, test_comm());
  const LayerCosts half  = layer_costs(v3, hw, ep8(), decode(16, 4096), true, test_comm());

  for (OpKind k : {OpKind::A0, OpKind::A1, OpKind::S}) {
    INFO(op_name(k));
    // the same weights per call, so the split reads them twice
    CHECK(half.find(k)->weight_bytes == Approx(whole.find(k)->weight_bytes));
    CHECK(2 * half.find(k)->bytes > whole.find(k)->bytes);
    // FLOPs split in half (A1's attention FLOPs too: each request attends to its own context)
    CHECK(2 * half.find(k)->flops == Approx(whole.find(k)->flops));
    // memory-bound at 32 tokens: the two halves together take longer than the whole (A1 less so: each request's KV
    // is read once whichever half holds it; only its FP8 o_proj and BF16 W_UK/W_UV weights are read twice)
    CHECK(2 * half.find(k)->duration_us > whole.find(k)->duration_us * (k == OpKind::A1 ? 1.25 : 1.5));
  }
  // Routed experts: at 16 and 32 tokens/rank (128 and 256 tokens over EP8), almost every local expert is active
  // either way, so the halves read nearly twice the expert weights of the whole.
  const double w_whole = whole.find(OpKind::MLP)->weight_bytes;
  const double w_half  = half.find(OpKind::MLP)->weight_bytes;
  CHECK(2 * w_half > 1.9 * w_whole);
  CHECK(2 * half.find(OpKind::MLP)->duration_us > 1.5 * whole.find(OpKind::MLP)->duration_us);
}

// Dispatch and combine come from models/All2AllModel (the cluster path's model) on balanced routing. Closed form,
// DeepSeek-V3, EP8 in one NVLink domain, DeepEP low-latency, 128 tokens per rank, top-8, link facts below:
//   bytes per copy: dispatch 7168 x 1 (fp8) + 7168/128 x 4 (scales) = 7392; combine 7168 x 2 = 14336.
//   balanced: 128 copies to each rank; NVLink = 7 x 128 x 7392 = 6,623,232 B at 160e9 x 7392/(7392+4480) B/s;
//   receive pass: 2 x 1024 copies x 7392 B at HBM 4.8e12 B/s; latency 2 x 1 us (data, then the count).
TEST_CASE("models::CommOps: D and C are the All2AllModel's, on balanced routing", "[quick]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  CHECK(dispatch_bytes_per_copy(v3) == 7392);
  CHECK(combine_bytes_per_copy(v3) == 14336);
  NetworkFacts net;
  net.name                          = "test";
  net.nvlink_achievable_bytes_per_s = 160e9;
  net.nic_achievable_bytes_per_s    = 50e9;
  net.nvlink_message_overhead_bytes = 4480;
  net.nic_message_overhead_bytes    = 1280;
  net.switch_latency_us             = 0.6;
  net.leaf_switch_down_ports        = 32;
  CommSetup comm;
  comm.net           = &net;
  comm.gpus_per_node = 8;

  const LayerCosts lc  = layer_costs(v3, hw, ep8(), decode(128, 4096), true, comm);
  const OpCost* d      = lc.find(OpKind::D);
  const double nvl_us  = 6623232.0 / (160e9 * 7392 / (7392 + 4480)) * 1e6;
  const double pass_us = 2 * 1024 * 7392.0 / 4.8e12 * 1e6;
  CHECK(d->bytes == Approx(1024 * 7392.0)); // DeepEP's benchmark: tokens x top-k x bytes per copy
  CHECK(d->duration_us == Approx(2.0 + pass_us + nvl_us).epsilon(1e-9));
  CHECK(d->bound == Bound::network);
  CHECK(d->method.find("All2AllModel") != std::string::npos);

  SECTION("the same time as the cluster path's slowest rank, for every backend, inside and across nodes")
  {
    for (int ep : {8, 16, 64})
      for (All2AllBackend b :
           {All2AllBackend::deepep_low_latency, All2AllBackend::deepep_high_throughput, All2AllBackend::nccl}) {
        ParallelSpec par = ep8();
        par.dp = ep, par.ep = ep, par.backend = b;
        const LayerCosts l = layer_costs(v3, hw, par, decode(96, 4096), true, comm);
        RoutingSpec spec;
        const RoutingMatrix rm = route_tokens(spec, place_experts(spec, 256, ep), 256, 8, ep, 8, 96);
        All2AllContext ctx{&v3, &hw, &net, 8, 0, 1};
        for (OpKind k : {OpKind::D, OpKind::C})
          CHECK(l.find(k)->duration_us == Approx(all2all_completion_us(all2all_per_rank(b, k, rm, ctx))));
      }
  }
  SECTION("an empty micro-batch still joins the all-to-all: latency only")
  {
    const LayerCosts empty = layer_costs(v3, hw, ep8(), decode(0, 4096), true, comm);
    CHECK(empty.find(OpKind::D)->duration_us == Approx(2.0));
    CHECK(empty.find(OpKind::MLP)->duration_us == 0);
  }
  SECTION("ep > 1 without network facts is an error naming them")
  {
    CHECK_THROWS_WITH(layer_costs(v3, hw, ep8(), decode(128, 4096), true, CommSetup{}),
                      Catch::Contains("network facts"));
  }
}

TEST_CASE("models::layer_costs: attention FLOPs and bytes", "[quick]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  // FlashMLA decode (reference A3): batch 128, context 4096, 128 heads, d_qk 576, d_v 512:
  //   FLOPs 2 x 128 x 128 x 4096 x (576 + 512) = 146.0e9; KV read 128 x 4096 x 576 x 2 B = 604 MB.
  ParallelSpec dp;
  const LayerCosts lc = layer_costs(v3, hw, dp, decode(128, 4096), false, test_comm());
  const OpCost* a1    = lc.find(OpKind::A1);
  CHECK(a1->method.find("mla_decode") != std::string::npos);
  const double core_flops = 2.0 * 128 * 128 * 4096 * (576 + 512);
  CHECK(core_flops == Approx(146.0e9).epsilon(1e-3));
  // + W_UK and W_UV (2 x 128 x 128 heads x 512 x 128 each) + o_proj (2 x 128 x 7168 x 128 heads x 128)
  const double w_uk = 2.0 * 128 * 128 * 512 * 128;
  const double o    = 2.0 * 128 * 7168 * (128 * 128);
  CHECK(a1->flops == Approx(core_flops + 2 * w_uk + o));
  CHECK(a1->bytes > 128.0 * 4096 * 576 * 2);
  // The FlashMLA call (split-KV kernel + combine, two launches timed together): reference A3 derives ~640 MB for the
  // split-KV kernel (KV 604 MB + queries and outputs 36 MB); the combine reads and writes the partial outputs,
  // 128 x 128 heads x 512 x (2 reads + 1 write) x 2 B = 50.3 MB.
  int calls = 0;
  for (const auto& k : attention_a1_kernels(v3, dp, decode(128, 4096), false))
    if (k.name == "mla_decode") {
      ++calls;
      CHECK(k.flops == Approx(core_flops));
      CHECK(k.bytes == Approx(640e6 + 128.0 * 128 * 512 * 3 * 2).epsilon(0.01));
      CHECK(k.launches == 2);
    }
  CHECK(calls == 1);

  SECTION("tensor parallel divides the heads")
  {
    ParallelSpec tp2;
    tp2.tp               = 2;
    const LayerCosts lc2 = layer_costs(v3, hw, tp2, decode(128, 4096), false, test_comm());
    CHECK(lc2.find(OpKind::A1)->flops == Approx(a1->flops / 2).epsilon(0.01));
    ParallelSpec tp3;
    tp3.tp = 3;
    CHECK_THROWS_AS(layer_costs(v3, hw, tp3, decode(128, 4096), false, test_comm()), std::invalid_argument);
  }
  SECTION("prefill is causal and up-projects the context with kv_b")
  {
    StepShape p;
    p.phase = Phase::prefill, p.tokens = 4096, p.batch = 1, p.context_len = 4096;
    const LayerCosts pre = layer_costs(v3, hw, dp, p, false, test_comm());
    CHECK(pre.find(OpKind::A0)->method.find("kv_b_proj") != std::string::npos);
    // causal: 4096 x 4097 / 2 query-key pairs x 128 heads x 2 x (192 + 128)
    const double core   = 2.0 * 128 * (192 + 128) * (4096.0 * 4097 / 2);
    const double o_proj = 2.0 * 4096 * 7168 * (128 * 128);
    CHECK(pre.find(OpKind::A1)->flops == Approx(core + o_proj));
  }
  SECTION("bad shapes are errors")
  {
    StepShape bad = decode(64, 4096);
    bad.batch     = 0;
    CHECK_THROWS_AS(layer_costs(v3, hw, dp, bad, true, test_comm()), std::invalid_argument);
    ParallelSpec ep7 = ep8();
    ep7.ep = 7, ep7.dp = 7;
    CHECK_THROWS_WITH(layer_costs(v3, hw, ep7, decode(64, 4096), true, test_comm()), Catch::Contains("ep=7"));
  }
}

TEST_CASE("models::layer_costs: vLLM's MoE DP chunk loop runs D, experts and C once per chunk of the step's tokens",
          "[quick]")
{
  const HwProfile hw          = dbosim::test::h200_like();
  const ModelSpec v3          = dbosim::load_model_zoo("deepseek-v3");
  CommSetup chunked           = test_comm();
  chunked.moe_dp_chunk_tokens = 256;
  const LayerCosts one        = layer_costs(v3, hw, ep8(), decode(512, 1024), true, test_comm());
  const LayerCosts two        = layer_costs(v3, hw, ep8(), decode(512, 1024), true, chunked);
  const LayerCosts half       = layer_costs(v3, hw, ep8(), decode(256, 1024), true, test_comm());
  for (const OpKind k : {OpKind::D, OpKind::MLP, OpKind::C}) {
    INFO(op_name(k));
    // Two rounds of 256 tokens: each of the three ops twice, its launches too.
    CHECK(two.find(k)->duration_us == Approx(2 * half.find(k)->duration_us).epsilon(1e-9));
    CHECK(two.find(k)->kernels == 2 * half.find(k)->kernels);
    CHECK(two.find(k)->flops == Approx(one.find(k)->flops).epsilon(1e-9)); // the same work, split
  }
  // The experts read their weights once per round: two rounds cost more than one of 512 tokens.
  CHECK(two.find(OpKind::MLP)->duration_us > one.find(OpKind::MLP)->duration_us);
  // Attention and the shared expert run once on the whole step.
  for (const OpKind k : {OpKind::A0, OpKind::A1, OpKind::S})
    CHECK(two.find(k)->duration_us == one.find(k)->duration_us);
  // A step within one chunk, or a backend without the masked buffer (DeepEP high-throughput), has no loop.
  CHECK(layer_costs(v3, hw, ep8(), decode(256, 1024), true, chunked).find(OpKind::MLP)->duration_us ==
        half.find(OpKind::MLP)->duration_us);
  ParallelSpec ht = ep8();
  ht.backend      = All2AllBackend::deepep_high_throughput;
  CHECK(layer_costs(v3, hw, ht, decode(512, 1024), true, chunked).find(OpKind::D)->duration_us ==
        layer_costs(v3, hw, ht, decode(512, 1024), true, test_comm()).find(OpKind::D)->duration_us);
}

TEST_CASE("models::layer_costs: many MoE DP chunks are the equal chunks summed one by one, then the remainder",
          "[quick]")
{
  // 8,000 tokens in chunks of 256: 31 equal chunks of 256 tokens and one of 64. The equal chunks are priced once and
  // added 31 times in order, so the totals are the chunk-by-chunk sums to the bit, and every chunk keeps its parts.
  const HwProfile hw          = dbosim::test::h200_like();
  const ModelSpec v3          = dbosim::load_model_zoo("deepseek-v3");
  CommSetup chunked           = test_comm();
  chunked.moe_dp_chunk_tokens = 256;
  const LayerCosts many       = layer_costs(v3, hw, ep8(), decode(8000, 1024), true, chunked);
  const LayerCosts full       = layer_costs(v3, hw, ep8(), decode(256, 1024), true, test_comm());
  const LayerCosts rest       = layer_costs(v3, hw, ep8(), decode(64, 1024), true, test_comm());
  for (const OpKind k : {OpKind::D, OpKind::MLP, OpKind::C}) {
    INFO(op_name(k));
    const OpCost& f = *full.find(k);
    const OpCost& r = *rest.find(k);
    double us = f.duration_us, flops = f.flops;
    for (int i = 1; i < 31; ++i)
      us += f.duration_us, flops += f.flops;
    us += r.duration_us, flops += r.flops;
    CHECK(many.find(k)->duration_us == us);
    CHECK(many.find(k)->flops == flops);
    CHECK(many.find(k)->kernels == 31 * f.kernels + r.kernels);
    CHECK(many.find(k)->parts.size() == 31 * f.parts.size() + r.parts.size());
    CHECK(many.find(k)->launch_split.size() == 31 * f.launch_split.size() + r.launch_split.size());
  }
}

TEST_CASE("models::layer_costs with a MoeOpsMemo: the same costs bit for bit, its MoE ops shared by tokens", "[quick]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  for (const int ep : {8, 64}) {
    ParallelSpec par = ep8();
    par.dp = ep, par.ep = ep;
    CommSetup comm                 = test_comm();
    comm.gpus_per_node             = 8;
    comm.moe_dp_chunk_tokens       = 256; // MoE DP chunks: the shapes above 256 tokens share their full chunks
    comm.expert_load               = ExpertLoadModel::eplb_residual;
    comm.routing.redundant_experts = 64;
    comm.routing.placement         = Placement::eplb;
    // Shapes of equal tokens with other requests and KV lengths, mixed prefill steps, chunked ones, and keys again.
    std::vector<StepShape> shapes{decode(64, 4096), decode(64, 300), decode(16, 4096)};
    for (const int tokens : {520, 1000, 520}) {
      StepShape mixed;
      mixed.phase = Phase::prefill, mixed.tokens = tokens, mixed.batch = 9, mixed.context_len = 2048;
      mixed.decode_tokens = mixed.decode_batch = 8;
      mixed.decode_context_len                 = 3000;
      shapes.push_back(mixed);
      mixed.batch       = 12;
      mixed.context_len = 700;
      shapes.push_back(mixed);
    }
    shapes.push_back(decode(64, 1000));
    MoeOpsMemo memo;
    for (const StepShape& s : shapes) {
      CAPTURE(ep, s.phase == Phase::decode, s.tokens, s.batch, s.context_len);
      const LayerCosts whole = layer_costs(v3, hw, par, s, true, comm);
      const LayerCosts kept  = layer_costs(v3, hw, par, s, comm, memo);
      REQUIRE(kept.ops.size() == whole.ops.size());
      for (std::size_t i = 0; i < whole.ops.size(); ++i) {
        CHECK(kept.ops[i].kind == whole.ops[i].kind);
        CHECK(kept.ops[i].duration_us == whole.ops[i].duration_us);
        CHECK(kept.ops[i].recv_us == whole.ops[i].recv_us);
        CHECK(kept.ops[i].kernels == whole.ops[i].kernels);
        CHECK(kept.ops[i].parts.size() == whole.ops[i].parts.size());
      }
      CHECK(kept.hot_rank_load == whole.hot_rank_load);
      CHECK(kept.straggler_us == whole.straggler_us);
    }
    CHECK(distinct_tokens(shapes) == memo.by_tokens.size());
  }
}

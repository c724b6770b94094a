#include "config/NetworkFactsLoader.hpp"
#include "models/KernelCost.hpp"
#include "models/OpCost.hpp"
#include "opcost_test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dbosim::models;

// One DeepSeek-V3 routed expert's gate+up GEMM: M tokens x K = hidden 7168 -> N = 2 x 2048 = 4096, on the
// H200-like profile (fp8 1979 TF/s, bf16 989 TF/s, HBM 4.8 TB/s, efficiencies 1.0).
//
// FP8, M = 128:
//   flops   = 2 x 128 x 4096 x 7168                         = 7,516,192,768
//   compute = 7.516e9 / 1.979e15 s                          = 3.798 us
//   bytes   = weights 4096 x 7168 x 1 B                     = 29,360,128
//           + input 128 x 7168 x 1 B (fp8-quantized)        =    917,504
//           + output 128 x 4096 x 2 B (bf16)                =  1,048,576   -> 31,326,208 B
//   memory  = 31,326,208 / 4.8e12 s                         = 6.526 us
//   -> memory-bound, 6.526 us. Arithmetic intensity 7.516e9 / 3.133e7 = 240 flop/B is below the fp8 ridge
//      1979e12 / 4.8e12 = 412 flop/B.
// FP8, M = 1024:
//   flops   = 6.013e10 -> compute 30.38 us; bytes 29,360,128 + 7,340,032 + 8,388,608 = 45,088,768 -> 9.39 us
//   -> compute-bound, 30.38 us (intensity 1334 flop/B > 412).
// BF16, M = 128:
//   compute = 7.516e9 / 9.89e14 s = 7.600 us; bytes 58,720,256 + 1,835,008 + 1,048,576 = 61,603,840 -> 12.83 us
//   -> memory-bound, 12.83 us (weights twice as large, ridge 206 flop/B, intensity 122).
TEST_CASE("models::KernelCost: expert GEMM roofline checked by hand", "[quick]")
{
  const HwProfile hw = dbosim::test::h200_like();

  SECTION("fp8, 128 tokens: memory-bound")
  {
    const KernelWork w = gemm_kernel("gate_up", 128, 4096, 7168, DType::fp8);
    CHECK(w.flops == Approx(7516192768.0));
    CHECK(w.bytes == Approx(31326208.0));
    CHECK(w.weight_bytes == Approx(29360128.0));
    const KernelTime t = kernel_time(hw, w);
    CHECK(t.bound == Bound::memory);
    CHECK(t.us == Approx(6.526).epsilon(1e-3));
  }
  SECTION("fp8, 1024 tokens: compute-bound")
  {
    const KernelTime t = kernel_time(hw, gemm_kernel("gate_up", 1024, 4096, 7168, DType::fp8));
    CHECK(t.bound == Bound::compute);
    CHECK(t.us == Approx(30.38).epsilon(1e-3));
  }
  SECTION("bf16, 128 tokens: memory-bound, twice the weight bytes")
  {
    const KernelTime t = kernel_time(hw, gemm_kernel("gate_up", 128, 4096, 7168, DType::bf16));
    CHECK(t.bound == Bound::memory);
    CHECK(t.us == Approx(12.834).epsilon(1e-3));
  }
  SECTION("efficiencies scale the terms they belong to")
  {
    HwProfile slow         = hw;
    slow.gemm_efficiency   = 0.5; // compute 30.38 -> 60.76 us
    slow.memory_efficiency = 0.5; // memory 9.39 -> 18.79 us
    const KernelTime t     = kernel_time(slow, gemm_kernel("gate_up", 1024, 4096, 7168, DType::fp8));
    CHECK(t.us == Approx(60.76).epsilon(1e-3));
    CHECK(t.method.find("roofline") != std::string::npos);
  }
  SECTION("an FP8 GEMM takes FP8's own measured efficiency where the profile has one, BF16 GEMMs keep theirs")
  {
    HwProfile p           = hw;
    p.gemm_efficiency     = 0.8;
    p.gemm_fp8_efficiency = 0.5; // fp8 compute 30.38 -> 60.76 us
    const KernelTime f    = kernel_time(p, gemm_kernel("gate_up", 1024, 4096, 7168, DType::fp8));
    CHECK(f.us == Approx(60.76).epsilon(1e-3));
    CHECK(f.method.find("gemm_fp8 eff 0.5") != std::string::npos);
    // bf16, 4096 tokens: compute 2 x 4096 x 4096 x 7168 / (9.89e14 x 0.8) = 303.97 us (memory 76.7 us)
    const KernelTime b = kernel_time(p, gemm_kernel("gate_up", 4096, 4096, 7168, DType::bf16));
    CHECK(b.us == Approx(303.97).epsilon(1e-3));
    p.gemm_fp8_efficiency = 0; // not in the profile: FP8 falls back to the gemm efficiency
    CHECK(kernel_time(p, gemm_kernel("gate_up", 1024, 4096, 7168, DType::fp8)).us == Approx(30.38 / 0.8).epsilon(1e-3));
  }
  SECTION("a missing peak is an error, not a silent default")
  {
    HwProfile no_fp8 = hw;
    no_fp8.peak_flops_per_s.erase(DType::fp8);
    CHECK_THROWS_WITH(kernel_time(no_fp8, gemm_kernel("gate_up", 128, 4096, 7168, DType::fp8)),
                      Catch::Contains("peak_tflops.fp8"));
  }
}

// The same expert inside a whole MoE layer: DeepSeek-V3-like expert dims, EP8 over 8 DP ranks, 16 tokens per
// rank. The EP group holds 16 x 8 = 128 tokens, each sent to 8 of 256 experts; a rank holds 32 experts and gets
// 128 x 8 x 32 / 256 = 128 copies: 4 per expert. Expected active experts: 32 x (1 - (1 - 8/256)^128)
// = 32 x (1 - 0.01718) = 31.45.
TEST_CASE("models::OpCost: routed experts read every active expert's weights once", "[quick]")
{
  ModelSpec m;
  m.num_layers = 4, m.first_k_dense = 1, m.hidden = 7168, m.vocab = 1000, m.dense_intermediate = 18432;
  m.num_routed_experts = 256, m.num_shared_experts = 1, m.top_k = 8, m.moe_intermediate = 2048;
  m.shared_intermediate = 2048, m.attention = AttentionKind::mla;
  m.mla              = {128, 1536, 512, 128, 64, 128};
  m.weight_dtype     = DType::fp8;
  const HwProfile hw = dbosim::test::h200_like();
  ParallelSpec par;
  par.dp = 8, par.ep = 8;
  StepShape s;
  s.tokens = 16, s.batch = 16, s.context_len = 1024;

  static const NetworkFacts net = dbosim::load_network_facts("h800");
  CommSetup comm;
  comm.net            = &net;
  const LayerCosts lc = layer_costs(m, hw, par, s, true, comm);
  const OpCost* mlp   = lc.find(OpKind::MLP);
  REQUIRE(mlp);
  const double active = 32 * (1 - std::pow(1 - 8.0 / 256, 128));
  CHECK(active == Approx(31.45).epsilon(1e-3));
  // gate_up (4096 x 7168) + down (7168 x 2048) fp8 weights per active expert
  CHECK(mlp->weight_bytes == Approx(active * (4096.0 * 7168 + 7168.0 * 2048)));
  CHECK(mlp->flops == Approx(2.0 * 128 * (4096.0 * 7168 + 7168.0 * 2048)));
  CHECK(mlp->bound == Bound::memory); // 4 rows per expert: far below the ridge
  CHECK(mlp->kernels == 3);
  CHECK(mlp->sm_family == "grouped_gemm");
}

// Reference A4 (DeepGEMM masked grouped GEMM, H800): 4 groups x 256 tokens, N x K = 4096 x 7168 at 932 TFLOP/s
// in 64.5 us, i.e. 932e12 x 64.5e-6 = 6.01e10 FLOPs: the work our grouped GEMM counts for the same shape.
TEST_CASE("models::KernelCost: grouped GEMM work matches the DeepGEMM reference shape", "[quick]")
{
  const KernelWork w = grouped_gemm_kernel("experts_gate_up", 4 * 256, 4, 4, 4096, 7168, DType::fp8);
  CHECK(w.flops == Approx(2.0 * 1024 * 4096 * 7168));
  CHECK(w.flops == Approx(932e12 * 64.5e-6).epsilon(0.01));
  CHECK(w.weight_bytes == Approx(4.0 * 4096 * 7168));
  CHECK(w.table_family == "grouped_gemm_fp8");
  CHECK(w.table_tokens == 256); // tokens per expert: the table axis
  CHECK(w.table_dims == std::map<std::string, int>{{"experts", 4}, {"n", 4096}, {"k", 7168}});
}

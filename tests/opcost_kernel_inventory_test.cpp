/* The kernel inventory as a serving engine launches it: floors, active experts, FP8 linears with their activation
 * quantization, the step's work outside the layers, and every shipped scenario's kernels at or above their floor. */
#include "config/ModelLoader.hpp"
#include "config/ScenarioLoader.hpp"
#include "models/AttentionOps.hpp"
#include "models/FfnOps.hpp"
#include "models/KernelCost.hpp"
#include "models/OpCost.hpp"
#include "models/StepWork.hpp"
#include "opcost_test_support.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

using namespace dbosim::models;

TEST_CASE("models::KernelCost: no kernel that does work costs less than its family's floor", "[quick]")
{
  HwProfile hw                      = dbosim::test::h200_like();
  hw.kernel_floor_us["elementwise"] = 1.5;
  hw.kernel_floor_us["gemm_fp8"]    = 3.0;
  // a residual add at one token: 7168 x 2 x 2 B over 4.8 TB/s = 0.006 us by the roofline, 1.5 us by its floor
  const KernelTime add = kernel_time(hw, streaming_kernel("add", 1, 7168, 1, 1, ""));
  CHECK(add.us == 1.5);
  CHECK(add.floored);
  CHECK(add.method.find("floor elementwise") != std::string::npos);
  // a GEMM whose roofline is above its floor keeps it: 4096 x 7168 FP8 weights = 29.4 MB / 4.8 TB/s = 6.1 us
  const KernelTime gemm = kernel_time(hw, gemm_kernel("gate_up", 1, 4096, 7168, DType::fp8));
  CHECK(gemm.us > 6.0);
  CHECK_FALSE(gemm.floored);
  // no floor for its family: the roofline stands, however small
  hw.kernel_floor_us.erase("elementwise");
  CHECK(kernel_time(hw, streaming_kernel("add", 1, 7168, 1, 1, "")).us < 0.01);
  // a kernel with no work (an empty micro-batch's) costs nothing, floor or not
  hw.kernel_floor_us["elementwise"] = 1.5;
  CHECK(kernel_time(hw, streaming_kernel("add", 0, 7168, 1, 1, "")).us == 0);
}

TEST_CASE("models::KernelCost: a grouped GEMM with few active experts runs the table's active share", "[quick]")
{
  HwProfile hw = dbosim::test::h200_like();
  OpTable t;
  t.family         = "grouped_gemm_fp8";
  t.dims           = {{"experts", 32}, {"n", 4096}, {"k", 7168}};
  t.us_by_tokens.x = {1, 2, 4};
  t.us_by_tokens.y = {240, 244, 250}; // every one of the 32 experts loaded with 1, 2, 4 tokens
  hw.tables.push_back(t);
  // 8 rows over 4 active experts of 32: 2 tokens per active expert, 4/32 of the table's work
  const KernelWork w = grouped_gemm_kernel("experts_gate_up", 8, 4, 32, 4096, 7168, DType::fp8);
  CHECK(w.table_tokens == 2);
  CHECK(w.table_scale == Approx(4.0 / 32));
  CHECK(kernel_time(hw, w).us == Approx(244.0 * 4 / 32));
  // every expert active: the table as measured
  CHECK(kernel_time(hw, grouped_gemm_kernel("experts_gate_up", 64, 32, 32, 4096, 7168, DType::fp8)).us ==
        Approx(244.0));
}

TEST_CASE("models::KernelCost: FP8 GEMMs prefer the block-scaled table, then the per-tensor one", "[quick]")
{
  HwProfile hw = dbosim::test::h200_like();
  OpTable per_tensor;
  per_tensor.family         = "gemm_fp8";
  per_tensor.dims           = {{"n", 7168}, {"k", 16384}};
  per_tensor.us_by_tokens.x = {1, 128};
  per_tensor.us_by_tokens.y = {44, 51};
  hw.tables.push_back(per_tensor);
  const KernelWork w = gemm_kernel("o_proj", 1, 7168, 16384, DType::fp8);
  CHECK(kernel_time(hw, w).us == 44);
  OpTable block        = per_tensor;
  block.family         = "gemm_fp8_block";
  block.us_by_tokens.y = {53, 56};
  hw.tables.push_back(block);
  CHECK(kernel_time(hw, w).us == 53);
  CHECK(w.table_family == "gemm_fp8"); // the SM tables keep keying the kernel as an FP8 GEMM
}

TEST_CASE("models::OpCost: an FP8 linear launches its activation quantization first, and every kernel names its source",
          "[quick]")
{
  std::vector<KernelWork> fp8, bf16;
  add_linear(fp8, "o_proj", 64, 7168, 16384, DType::fp8, "somewhere");
  add_linear(bf16, "o_proj", 64, 7168, 16384, DType::bf16, "somewhere");
  REQUIRE(fp8.size() == 2);
  CHECK(fp8[0].floor_family == "quant");
  CHECK(fp8[0].bytes == Approx(64.0 * 16384 * 2 + 64.0 * 16384 + 64.0 * 128 * 4)); // bf16 in, FP8 + scales out
  CHECK(fp8[1].name == "o_proj");
  CHECK(bf16.size() == 1);

  const ModelSpec m = dbosim::load_model_zoo("deepseek-v3");
  ParallelSpec par;
  par.dp = par.ep = 8;
  par.backend     = All2AllBackend::deepep_low_latency;
  StepShape s;
  s.tokens = s.batch = 16;
  s.context_len      = 1024;
  // every kernel of a decode MoE layer says where vLLM launches it
  for (const auto& k : attention_a0_kernels(m, par, s))
    CHECK_FALSE(k.source.empty());
  for (const auto& k : attention_a1_kernels(m, par, s, true))
    CHECK_FALSE(k.source.empty());
  const std::vector<KernelWork> experts = routed_mlp_kernels(m, par, s);
  CHECK(experts.size() == 3); // DeepEP low-latency's masked layout: no permutation around the grouped GEMMs
  for (const auto& k : experts)
    CHECK_FALSE(k.source.empty());
  par.backend = All2AllBackend::deepep_high_throughput;
  CHECK(routed_mlp_kernels(m, par, s).size() == 5); // permute + gate_up + SiLU-mul-quant + down + un-permute/reduce
}

TEST_CASE("models::StepWork: embedding, final norm, LM head over the sampled positions, sampler", "[quick]")
{
  const ModelSpec m = dbosim::load_model_zoo("deepseek-v3");
  HwProfile hw      = dbosim::test::h200_like();
  ParallelSpec par;
  StepShape s;
  s.phase                         = Phase::prefill;
  s.tokens                        = 4096;
  s.batch                         = 2;
  s.context_len                   = 2048;
  const std::vector<KernelWork> k = step_work_kernels(m, par, s);
  REQUIRE(k.size() == 4);
  CHECK(k[2].name == "lm_head");
  CHECK(k[2].table_tokens == 2); // logits only where a request samples, not for all 4096 prompt tokens
  CHECK(k[2].weight_bytes == Approx(129280.0 * 7168 * 2));
  // decode at 1 request: the LM head's BF16 weights, 1.85 GB, dominate: >= 1.85e9 / 4.8e12 s
  s.phase  = Phase::decode;
  s.tokens = s.batch = 1;
  const OpCost c     = step_work_cost(m, hw, par, s);
  CHECK(c.duration_us >= 129280.0 * 7168 * 2 / 4.8e12 * 1e6);
  CHECK(c.kernels == 4);
  // tensor parallelism splits the vocabulary
  par.tp = 2;
  CHECK(step_work_kernels(m, par, s)[2].weight_bytes == Approx(129280.0 / 2 * 7168 * 2));
}

TEST_CASE("models: every kernel of every shipped scenario costs at least its family's floor", "[quick]")
{
  const std::string dir = std::string(DBOSIM_SOURCE_DIR) + "/scenarios";
  int checked = 0, floored = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml")
      continue;
    const dbosim::Scenario sc = dbosim::load_scenario(entry.path().string());
    INFO(entry.path().filename().string());
    StepShape s = sc.step;
    std::vector<OpCost> ops;
    for (bool moe : {true, false}) {
      if ((moe && sc.model.num_moe_layers() == 0) || (!moe && sc.model.first_k_dense == 0))
        continue;
      for (const OpCost& op : layer_costs(sc.model, sc.hw, sc.parallel, s, moe, dbosim::sim::comm_setup(sc, 0)).ops)
        ops.push_back(op);
    }
    ops.push_back(step_work_cost(sc.model, sc.hw, sc.parallel, s));
    for (const OpCost& op : ops)
      for (const OpKernelPart& k : op.parts) {
        INFO(k.name);
        CHECK_FALSE(k.source.empty());
        auto floor = sc.hw.kernel_floor_us.find(k.floor_family);
        if (k.us > 0 && floor != sc.hw.kernel_floor_us.end()) {
          CHECK(k.us >= floor->second);
          ++checked;
          floored += k.floored;
        }
      }
  }
  CHECK(checked > 100);
  CHECK(floored > 0); // the measured H200 profile's floors do set some kernels (rope, cache writes at decode)
}

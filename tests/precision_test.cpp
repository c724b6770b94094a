/* The precision keys (docs/dimensions.md): read and validated, checked against the GPU, and priced: a format's bytes
 * and peak move the GEMM, grouped-GEMM, all-to-all and KV-capacity terms; a scenario without them prices as before. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/ScenarioParams.hpp"
#include "models/AttentionOps.hpp"
#include "models/CommOps.hpp"
#include "models/FfnOps.hpp"
#include "models/KernelCost.hpp"
#include "models/Precision.hpp"
#include "plan/EngineLaunches.hpp"
#include "serving/KvCapacity.hpp"

#include <catch2/catch.hpp>

#include <string>

using dbosim::InputError;
using dbosim::load_scenario;
using dbosim::test::TempDir;
using namespace dbosim::models;

namespace {
/** An EP8 decode scenario on `hw`; `extra` appended (a precision: section). */
std::string scenario(const std::string& hw, const std::string& extra, const std::string& model = "deepseek-r1")
{
  return "model: " + model + "\nhardware: " + hw + R"(
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload:
  phase: decode
  tokens_per_rank: 64
overlap:
  all2all_backend: deepep_low_latency
)" + extra;
}

dbosim::Scenario load(const std::string& yaml)
{
  TempDir dir;
  return load_scenario(dir.write("case.yaml", yaml));
}

/** The load's error message after "file:"; fails the test if it loads. */
std::string error_of(const std::string& yaml)
{
  TempDir dir;
  const std::string path = dir.write("case.yaml", yaml);
  try {
    load_scenario(path);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.rfind(path + ":", 0) == 0);
    return msg.substr(path.size());
  }
  FAIL("scenario loaded but should have been rejected:\n" << yaml);
  return "";
}

/** The summed full-GPU time of the routed experts' grouped GEMMs at 64 decode tokens per rank. */
double experts_us(const dbosim::Scenario& s, double* weight_bytes = nullptr)
{
  StepShape shape;
  shape.tokens = shape.batch = 64;
  shape.context_len          = 2048;
  double us = 0, wb = 0;
  for (const KernelWork& k : routed_mlp_kernels(s.model, s.parallel, shape))
    if (k.name == "experts_gate_up" || k.name == "experts_down") {
      us += kernel_time(s.hw, k).us;
      wb += k.weight_bytes;
    }
  if (weight_bytes)
    *weight_bytes = wb;
  return us;
}
} // namespace

TEST_CASE("config::PrecisionParams: every key is read into the model", "[quick]")
{
  const auto s = load(scenario("b200", R"(precision:
  attention: fp8_tensor
  routed_experts: nvfp4
  shared_experts: fp8_block
  dense_mlp: w4a8
  lm_head: fp8_tensor
  kv_cache_dtype: fp8
  dispatch_dtype: nvfp4
  combine_dtype: fp8
)"));
  CHECK(s.model.precision.attention == WeightQuant::fp8_tensor);
  CHECK(s.model.precision.routed_experts == WeightQuant::nvfp4);
  CHECK(s.model.precision.shared_experts == WeightQuant::fp8_block);
  CHECK(s.model.precision.dense_mlp == WeightQuant::w4a8);
  CHECK(s.model.precision.lm_head == WeightQuant::fp8_tensor);
  CHECK(s.model.kv_dtype == DType::fp8);
  CHECK(s.model.dispatch_dtype == DType::fp4);
  CHECK(s.model.combine_dtype == DType::fp8);

  // No precision: section: the model's dtypes, no format set (priced as before the keys).
  const auto plain = load(scenario("h200", ""));
  CHECK(plain.model.precision == OpPrecision{});
  CHECK(plain.model.kv_dtype == DType::bf16);
  CHECK(plain.model.dispatch_dtype == DType::fp8);
  // kv_cache_dtype auto keeps the model's
  CHECK(load(scenario("h200", "precision: {kv_cache_dtype: auto}\n")).model.kv_dtype == DType::bf16);
}

TEST_CASE("config::PrecisionParams: an unknown value is exit 2 at the key with the valid values", "[quick]")
{
  const std::string quant = error_of(scenario("b200", "precision:\n  routed_experts: int4\n"));
  CHECK(quant.find("precision.routed_experts") != std::string::npos);
  CHECK(quant.find("bf16, fp8_block, fp8_tensor, nvfp4, mxfp4, w4a8") != std::string::npos);
  const std::string kv = error_of(scenario("b200", "precision:\n  kv_cache_dtype: fp4\n"));
  CHECK(kv.find("precision.kv_cache_dtype") != std::string::npos);
  CHECK(kv.find("auto, bf16, fp8") != std::string::npos);
  const std::string d = error_of(scenario("b200", "precision:\n  dispatch_dtype: mxfp4\n"));
  CHECK(d.find("precision.dispatch_dtype") != std::string::npos);
  CHECK(d.find("bf16, fp8, nvfp4") != std::string::npos);
  const std::string unknown = error_of(scenario("b200", "precision:\n  experts: nvfp4\n"));
  CHECK(unknown.find("experts") != std::string::npos);
}

TEST_CASE("config::PrecisionParams: a format the GPU cannot run is exit 2 naming the key", "[quick]")
{
  // Hopper has no FP4 tensor cores (no peak_tflops.fp4 in the profile).
  const std::string hopper = error_of(scenario("h200", "precision:\n  routed_experts: nvfp4\n"));
  CHECK(hopper.find("precision.routed_experts") != std::string::npos);
  CHECK(hopper.find("peak_tflops.fp4") != std::string::npos);
  CHECK(hopper.find("on h200: bf16, fp8_block, fp8_tensor, w4a8") != std::string::npos);
  CHECK(error_of(scenario("h200", "precision:\n  dispatch_dtype: nvfp4\n")).find("precision.dispatch_dtype") !=
        std::string::npos);
  // MI355X runs MXFP4, not NVIDIA's NVFP4.
  const std::string amd = error_of(scenario("mi355x", "precision:\n  routed_experts: nvfp4\n"));
  CHECK(amd.find("precision.routed_experts") != std::string::npos);
  CHECK(amd.find("mxfp4") != std::string::npos);
  CHECK(load(scenario("mi355x", "precision:\n  routed_experts: mxfp4\n")).model.precision.routed_experts ==
        WeightQuant::mxfp4);
  // A quantized zoo checkpoint on a GPU that cannot run it: the error names `model`.
  const std::string zoo = error_of(scenario("h200", "", "deepseek-r1-fp4"));
  CHECK(zoo.find(": model: ") != std::string::npos);
  CHECK(zoo.find("nvfp4") != std::string::npos);
}

TEST_CASE("config::PrecisionParams: the keys are in --help-params", "[quick]")
{
  const std::string table = dbosim::format_param_table();
  for (const char* key :
       {"precision.attention", "precision.routed_experts", "precision.shared_experts", "precision.dense_mlp",
        "precision.lm_head", "precision.kv_cache_dtype", "precision.dispatch_dtype", "precision.combine_dtype"})
    CHECK(table.find(key) != std::string::npos);
}

TEST_CASE("models::Precision: the zoo's quantized checkpoints carry their formats", "[quick]")
{
  const ModelSpec fp4 = dbosim::load_model_zoo("deepseek-r1-fp4");
  CHECK(fp4.precision.routed_experts == WeightQuant::nvfp4);
  CHECK(fp4.precision.dense_mlp == WeightQuant::nvfp4);
  CHECK(fp4.precision.attention == WeightQuant::bf16);
  CHECK(fp4.kv_dtype == DType::fp8);
  CHECK(dbosim::plan::model_id(fp4) == "nvidia/DeepSeek-R1-FP4"); // the launch text serves the quantized checkpoint
  const ModelSpec mx = dbosim::load_model_zoo("deepseek-r1-mxfp4");
  CHECK(mx.precision.routed_experts == WeightQuant::mxfp4);
  CHECK(dbosim::plan::model_id(mx) == "amd/DeepSeek-R1-0528-MXFP4-ASQ");
  CHECK(dbosim::load_model_zoo("deepseek-r1").precision == OpPrecision{});
}

TEST_CASE("models::Precision: the experts' priced time moves with their format", "[quick]")
{
  double fp8_b = 0, fp4_b = 0, legacy_b = 0;
  const auto fp8    = load(scenario("b200", "precision: {routed_experts: fp8_block}\n"));
  const auto fp4    = load(scenario("b200", "precision: {routed_experts: nvfp4}\n"));
  const auto legacy = load(scenario("b200", ""));
  const double t8 = experts_us(fp8, &fp8_b), t4 = experts_us(fp4, &fp4_b), t0 = experts_us(legacy, &legacy_b);
  // NVFP4 reads 4 bits and one E4M3 scale per 16 values; FP8 block 8 bits and one fp32 per 128x128 block.
  CHECK(fp4_b / fp8_b == Approx((0.5 + 1.0 / 16) / (1.0 + 4.0 / 16384)));
  CHECK(t4 < t8); // decode experts are memory-bound on B200: fewer bytes, less time
  // The zoo's FP8 dtype without precision: no scale bytes (as priced before the keys), the same kernels otherwise.
  CHECK(legacy_b < fp8_b);
  CHECK(legacy_b == Approx(fp8_b).epsilon(1e-3));
  CHECK(t0 <= t8);
  // The compute term follows the format's peak: at a compute-bound size NVFP4 runs at the FP4 peak, at the profile's
  // FP4 fraction of it where it has one (b200: fitted on published NVFP4 GEMMs).
  const HwProfile hw = fp4.hw;
  const KernelTime big4 =
      kernel_time(hw, grouped_gemm_kernel("g", 65536, 32, 32, 4096, 7168, quant_format(WeightQuant::nvfp4)));
  const KernelTime big8 =
      kernel_time(hw, grouped_gemm_kernel("g", 65536, 32, 32, 4096, 7168, quant_format(WeightQuant::fp8_tensor)));
  CHECK(big4.bound == Bound::compute);
  CHECK(big8.us / big4.us == Approx(hw.peak_flops_per_s.at(DType::fp4) / hw.peak_flops_per_s.at(DType::fp8) *
                                    (hw.gemm_fp4_efficiency > 0 ? hw.gemm_fp4_efficiency : hw.gemm_efficiency) /
                                    (hw.gemm_fp8_efficiency > 0 ? hw.gemm_fp8_efficiency : hw.gemm_efficiency)));
}

TEST_CASE("models::Precision: dispatch and combine payloads carry their scales", "[quick]")
{
  ModelSpec m      = dbosim::load_model_zoo("deepseek-r1");
  const double fp8 = dispatch_bytes_per_copy(m);
  CHECK(fp8 == Approx(7168 * (1 + 4.0 / 128)));
  m.dispatch_dtype = DType::fp4;
  CHECK(dispatch_bytes_per_copy(m) == Approx(7168 * (0.5 + 1.0 / 16)));
  m.combine_dtype = DType::fp4;
  CHECK(combine_bytes_per_copy(m) == Approx(7168 * (0.5 + 1.0 / 16)));
}

TEST_CASE("serving::KvCapacity: kv_cache_dtype fp8 doubles the KV tokens against bf16", "[quick]")
{
  const auto b = dbosim::serving::kv_capacity(load(scenario("b200", "precision: {kv_cache_dtype: bf16}\n")));
  const auto f = dbosim::serving::kv_capacity(load(scenario("b200", "precision: {kv_cache_dtype: fp8}\n")));
  CHECK(f.kv_bytes_per_token == Approx(b.kv_bytes_per_token / 2));
  CHECK(f.weight_bytes == b.weight_bytes);
  CHECK(double(f.tokens()) / double(b.tokens()) == Approx(2.0).epsilon(0.002));
  // NVFP4 experts leave more HBM to the KV cache than the checkpoint's FP8 ones.
  const auto nv = dbosim::serving::kv_capacity(load(scenario("b200", "precision: {routed_experts: nvfp4}\n")));
  CHECK(nv.weight_bytes < b.weight_bytes);
  CHECK(nv.tokens() > b.tokens());
}

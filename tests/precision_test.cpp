/* The precision keys (docs/dimensions.md): read and validated, and checked against the GPU. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/ScenarioParams.hpp"
#include "models/Quant.hpp"

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
}

TEST_CASE("config::PrecisionParams: the keys are in --help-params", "[quick]")
{
  const std::string table = dbosim::format_param_table();
  for (const char* key :
       {"precision.attention", "precision.routed_experts", "precision.shared_experts", "precision.dense_mlp",
        "precision.lm_head", "precision.kv_cache_dtype", "precision.dispatch_dtype", "precision.combine_dtype"})
    CHECK(table.find(key) != std::string::npos);
}

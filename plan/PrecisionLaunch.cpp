#include "plan/PrecisionLaunch.hpp"

#include "models/All2AllTable.hpp"
#include "models/Quant.hpp"
#include "plan/UnsaidSettings.hpp"

#include <fmt/format.h>

namespace dbosim::plan {
namespace {

bool any_weights(const models::ModelSpec& m, models::WeightQuant q)
{
  for (const models::OpClass* c = models::op_classes_begin(); c != models::op_classes_end(); ++c)
    if (m.precision.at(*c) == q)
      return true;
  return false;
}

} // namespace

PrecisionLaunch precision_launch(const Scenario& s, LaunchFamily f)
{
  PrecisionLaunch p;
  const models::ModelSpec& m = s.model;

  // KV cache. vLLM: --kv-cache-dtype fp8 (vllm/config/cache.py, CacheDType; "auto" keeps the model dtype, so an FP8
  // cache needs the flag even where the checkpoint carries KV scales). SGLang: --kv-cache-dtype fp8_e4m3
  // (docs.sglang.io advanced_features/quantized_kv_cache). TensorRT-LLM: kv_cache_config.dtype fp8 in the extra LLM
  // API options (NVIDIA/TensorRT-LLM examples/serve/deepseek_r1_reasoning_parser.sh).
  if (m.kv_dtype == models::DType::fp8) {
    if (f == LaunchFamily::vllm_serve)
      p.args += " --kv-cache-dtype fp8";
    else if (f == LaunchFamily::sglang_launch_server)
      p.args += " --kv-cache-dtype fp8_e4m3";
    else if (f == LaunchFamily::trtllm_serve)
      p.trtllm_options += " kv_cache_config: {dtype: fp8};";
  }

  // Weights. vLLM and TensorRT-LLM read the format from the checkpoint (config.json quantization_config /
  // hf_quant_config.json: modelopt NVFP4, quark MXFP4); SGLang is told an NVFP4 ModelOpt checkpoint with
  // --quantization modelopt_fp4 (SGLang's DeepSeek NVFP4 launch recipes). A precision.* key that changes the
  // checkpoint's format is no flag at all: it needs a checkpoint quantized that way.
  if (f == LaunchFamily::sglang_launch_server && any_weights(m, models::WeightQuant::nvfp4))
    p.args += " --quantization modelopt_fp4";
  for (const models::OpClass* c = models::op_classes_begin(); c != models::op_classes_end(); ++c)
    if (const auto& q = s.precision.ops.at(*c))
      p.notes.push_back(fmt::format("# precision.{} {}: the weights' format is the checkpoint's (serve one quantized "
                                    "so)",
                                    models::op_class_name(*c), models::weight_quant_name(*q)));

  // Dispatch / combine payloads: vLLM's NVFP4 low-latency dispatch is an environment switch; every other payload
  // choice follows the experts' quantization, no flag (plan/UnsaidSettings.cpp notes those).
  if (f == LaunchFamily::vllm_serve && vllm_nvfp4_dispatch(s))
    p.env.emplace_back("VLLM_DEEPEPLL_NVFP4_DISPATCH", "1");
  return p;
}

} // namespace dbosim::plan

#include "plan/PrecisionLaunch.hpp"

#include "models/All2AllTable.hpp"
#include "models/Quant.hpp"

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

const char* engine_label(LaunchFamily f)
{
  switch (f) {
  case LaunchFamily::vllm_serve:
    return "vLLM";
  case LaunchFamily::sglang_launch_server:
    return "SGLang";
  case LaunchFamily::trtllm_serve:
    return "TensorRT-LLM";
  case LaunchFamily::none:
    break;
  }
  return "engine";
}

/** A payload dtype as the precision.* keys spell it (fp4 is "nvfp4" there). */
std::string payload_name(models::DType t) { return t == models::DType::fp4 ? "nvfp4" : models::dtype_name(t); }

} // namespace

PrecisionLaunch precision_launch(const Scenario& s, LaunchFamily f)
{
  PrecisionLaunch p;
  const models::ModelSpec& m = s.model;
  const std::string label    = engine_label(f);
  auto not_a_flag            = [&](const std::string& text) {
    p.notes.push_back(fmt::format("# not a {} flag: {}", label, text));
  };

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
      not_a_flag(fmt::format("precision.{} {} (the weights' format is the checkpoint's: serve one quantized so)",
                             models::op_class_name(*c), models::weight_quant_name(*q)));

  // Dispatch / combine payloads. vLLM quantizes the DeepEP low-latency dispatch to NVFP4 for NVFP4 experts when
  // VLLM_DEEPEPLL_NVFP4_DISPATCH=1 (vllm/envs.py; read by the DeepEP LL prepare/finalize when the experts' quant dtype
  // is nvfp4; Blackwell only); every other payload choice follows the experts' quantization, no flag.
  const bool nvfp4_experts = m.precision.routed_experts == models::WeightQuant::nvfp4;
  if (s.parallel.ep > 1 && m.dispatch_dtype == models::DType::fp4) {
    if (f == LaunchFamily::vllm_serve && s.parallel.backend == models::All2AllBackend::deepep_low_latency &&
        nvfp4_experts)
      p.env.emplace_back("VLLM_DEEPEPLL_NVFP4_DISPATCH", "1");
    else
      not_a_flag(fmt::format("precision.dispatch_dtype nvfp4 with {}{}", models::backend_name(s.parallel.backend),
                             f == LaunchFamily::vllm_serve
                                 ? " (vLLM's NVFP4 dispatch is deepep_low_latency with NVFP4 experts: "
                                   "VLLM_DEEPEPLL_NVFP4_DISPATCH)"
                                 : ""));
  } else if (s.precision.dispatch_dtype) {
    not_a_flag(fmt::format("precision.dispatch_dtype {} (the engine picks the dispatch payload from the experts' "
                           "quantization)",
                           payload_name(*s.precision.dispatch_dtype)));
  }
  if (s.precision.combine_dtype)
    not_a_flag(fmt::format("precision.combine_dtype {} (the engine picks the combine payload)",
                           payload_name(*s.precision.combine_dtype)));
  return p;
}

} // namespace dbosim::plan

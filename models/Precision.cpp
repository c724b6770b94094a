#include "models/Precision.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dbosim::models {
namespace {
// Scale layouts, bytes per element: NVFP4 one FP8 E4M3 scale per 16 values (NVIDIA, "Introducing NVFP4",
// developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference; the checkpoint's
// weight_scale tensor is [N, K/16] F8_E4M3, TensorRT-Model-Optimizer examples/deepseek/quantize_to_nvfp4.py,
// convert_fp8_ckpt_to_nvfp4: NVFP4QTensor.quantize(weight, 16, ...)); MXFP4 one E8M0 byte per 32 (OCP Microscaling
// Formats (MX) v1.0, block size 32); FP8 block one fp32 per 128x128 weight block and per 1x128 activation group
// (DeepSeek-V3 config.json weight_block_size [128, 128]; vLLM fp8_utils.py per_token_group_quant_fp8, group 128);
// W4A8 one bf16 scale per group of 128 weights (TensorRT-LLM W4A8 AWQ, group size 128) and FP8 per-tensor activations.
constexpr double nvfp4_bytes            = 0.5 + 1.0 / 16;
constexpr double mxfp4_bytes            = 0.5 + 1.0 / 32;
constexpr double fp8_block_weight_bytes = 1.0 + 4.0 / (128.0 * 128.0);
constexpr double fp8_block_act_bytes    = 1.0 + 4.0 / 128.0;
constexpr double w4a8_weight_bytes      = 0.5 + 2.0 / 128.0;
} // namespace

LinearFormat dtype_format(DType t)
{
  LinearFormat f;
  f.name             = dtype_name(t);
  f.compute          = t;
  f.weight_bytes     = dtype_bytes(t);
  f.activation_bytes = std::min(2.0, dtype_bytes(t));
  f.quantize_input   = dtype_bytes(t) < 2;
  f.table            = dtype_name(t);
  f.table_prefer     = t == DType::fp8 ? "gemm_fp8_block" : "";
  f.floor            = t == DType::bf16 ? "gemm" : "gemm_fp8";
  return f;
}

DType compute_dtype(WeightQuant q)
{
  switch (q) {
  case WeightQuant::bf16:
    return DType::bf16;
  case WeightQuant::fp8_block:
  case WeightQuant::fp8_tensor:
  case WeightQuant::w4a8:
    return DType::fp8;
  case WeightQuant::nvfp4:
  case WeightQuant::mxfp4:
    return DType::fp4;
  }
  return DType::bf16;
}

LinearFormat quant_format(WeightQuant q)
{
  LinearFormat f;
  f.name    = weight_quant_name(q);
  f.compute = compute_dtype(q);
  // A low-precision GEMM's launch floor: the FP8 GEMM's measured floor (no FP4 or W4A8 floor is measured; a tiny
  // kernel's floor is set by the launch path and the clock, not by its bytes).
  f.floor = q == WeightQuant::bf16 ? "gemm" : "gemm_fp8";
  switch (q) {
  case WeightQuant::bf16:
    f.weight_bytes = f.activation_bytes = 2;
    f.table                             = "bf16";
    break;
  case WeightQuant::fp8_block:
    f.weight_bytes     = fp8_block_weight_bytes;
    f.activation_bytes = fp8_block_act_bytes;
    f.quant_out_bytes  = fp8_block_act_bytes;
    f.table            = "fp8";
    f.table_prefer     = "gemm_fp8_block";
    break;
  case WeightQuant::fp8_tensor:
    f.weight_bytes = f.activation_bytes = f.quant_out_bytes = 1;
    f.table                                                 = "fp8";
    break;
  case WeightQuant::nvfp4:
    f.weight_bytes = f.activation_bytes = f.quant_out_bytes = nvfp4_bytes;
    f.table                                                 = "nvfp4";
    break;
  case WeightQuant::mxfp4:
    f.weight_bytes = f.activation_bytes = f.quant_out_bytes = mxfp4_bytes;
    f.table                                                 = "mxfp4";
    break;
  case WeightQuant::w4a8:
    f.weight_bytes     = w4a8_weight_bytes;
    f.activation_bytes = f.quant_out_bytes = 1;
    f.table                                = "w4a8";
    break;
  }
  f.quantize_input = q != WeightQuant::bf16;
  return f;
}

LinearFormat linear_format(const ModelSpec& m, OpClass c)
{
  if (const auto& q = m.precision.at(c))
    return quant_format(*q);
  switch (c) {
  case OpClass::attention:
    return dtype_format(m.attn_dtype);
  case OpClass::lm_head:
    return dtype_format(DType::bf16); // every zoo checkpoint leaves the LM head unquantized
  default:
    return dtype_format(m.weight_dtype);
  }
}

double weight_bytes_per_element(const ModelSpec& m, OpClass c) { return linear_format(m, c).weight_bytes; }

double payload_bytes_per_element(DType t)
{
  if (t == DType::fp4)
    return 0.5 + 1.0 / 16; // NVFP4: one E4M3 scale per 16 values
  if (dtype_bytes(t) <= 1.0)
    return dtype_bytes(t) + 4.0 / 128; // DeepEP FP8: one fp32 scale per 128 hidden elements
  return dtype_bytes(t);
}

std::string quant_unsupported(const HwProfile& hw, WeightQuant q)
{
  const DType c = compute_dtype(q);
  auto it       = hw.peak_flops_per_s.find(c);
  if (it == hw.peak_flops_per_s.end() || !(it->second > 0))
    return fmt::format("{} runs on {} tensor cores; profile {} ({}) has no peak_tflops.{}", weight_quant_name(q),
                       dtype_name(c), hw.name, hw.gpu, dtype_name(c));
  if (q == WeightQuant::nvfp4 && hw.platform.stack != Platform::cuda)
    return fmt::format("nvfp4 is NVIDIA's format (Blackwell); profile {} ({}) runs the OCP MX formats (mxfp4)", hw.name,
                       hw.gpu);
  return "";
}

std::string payload_unsupported(const HwProfile& hw, DType t)
{
  if (t != DType::fp4)
    return "";
  return quant_unsupported(hw, WeightQuant::nvfp4);
}

} // namespace dbosim::models

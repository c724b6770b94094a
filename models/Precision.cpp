#include "models/Precision.hpp"

#include <fmt/format.h>

namespace dbosim::models {
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

std::string quant_unsupported(const HwProfile& hw, WeightQuant q)
{
  const DType c = compute_dtype(q);
  auto it       = hw.peak_flops_per_s.find(c);
  if (it == hw.peak_flops_per_s.end() || !(it->second > 0))
    return fmt::format("{} runs on {} tensor cores; profile {} ({}) has no peak_tflops.{}", weight_quant_name(q),
                       dtype_name(c), hw.name, hw.gpu, dtype_name(c));
  if (q == WeightQuant::nvfp4 && hw.platform.stack != "cuda")
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

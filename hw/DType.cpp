#include "hw/DType.hpp"

#include <utility>
#include <vector>

namespace dbosim::models {
namespace {
const std::vector<std::pair<std::string, DType>>& spellings()
{
  static const std::vector<std::pair<std::string, DType>> table{
      {"fp32", DType::fp32}, {"float32", DType::fp32}, {"bf16", DType::bf16}, {"bfloat16", DType::bf16},
      {"fp16", DType::fp16}, {"float16", DType::fp16}, {"fp8", DType::fp8},   {"float8_e4m3fn", DType::fp8},
      {"e4m3", DType::fp8},  {"fp4", DType::fp4},      {"nvfp4", DType::fp4}};
  return table;
}
} // namespace

double dtype_bytes(DType t)
{
  switch (t) {
  case DType::fp32:
    return 4.0;
  case DType::bf16:
  case DType::fp16:
    return 2.0;
  case DType::fp8:
    return 1.0;
  case DType::fp4:
    return 0.5;
  }
  return 0.0;
}

std::string dtype_name(DType t)
{
  switch (t) {
  case DType::fp32:
    return "fp32";
  case DType::bf16:
    return "bf16";
  case DType::fp16:
    return "fp16";
  case DType::fp8:
    return "fp8";
  case DType::fp4:
    return "fp4";
  }
  return "?";
}

bool parse_dtype(const std::string& name, DType& out)
{
  for (const auto& [spelling, t] : spellings())
    if (spelling == name) {
      out = t;
      return true;
    }
  return false;
}

std::string dtype_names() { return "fp32, bf16, fp16, fp8, fp4"; }

} // namespace dbosim::models

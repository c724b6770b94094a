#include "models/Quant.hpp"

#include <array>
#include <utility>

namespace dbosim::models {
namespace {
constexpr std::array<std::pair<const char*, WeightQuant>, 6> quant_names{{{"bf16", WeightQuant::bf16},
                                                                          {"fp8_block", WeightQuant::fp8_block},
                                                                          {"fp8_tensor", WeightQuant::fp8_tensor},
                                                                          {"nvfp4", WeightQuant::nvfp4},
                                                                          {"mxfp4", WeightQuant::mxfp4},
                                                                          {"w4a8", WeightQuant::w4a8}}};
constexpr std::array<OpClass, 5> classes{OpClass::attention, OpClass::routed_experts, OpClass::shared_experts,
                                         OpClass::dense_mlp, OpClass::lm_head};
} // namespace

std::optional<WeightQuant>& OpPrecision::at(OpClass c)
{
  return const_cast<std::optional<WeightQuant>&>(static_cast<const OpPrecision&>(*this).at(c));
}

const std::optional<WeightQuant>& OpPrecision::at(OpClass c) const
{
  switch (c) {
  case OpClass::attention:
    return attention;
  case OpClass::routed_experts:
    return routed_experts;
  case OpClass::shared_experts:
    return shared_experts;
  case OpClass::dense_mlp:
    return dense_mlp;
  case OpClass::lm_head:
    break;
  }
  return lm_head;
}

std::string weight_quant_name(WeightQuant q)
{
  for (const auto& [name, v] : quant_names)
    if (v == q)
      return name;
  return "?";
}

bool parse_weight_quant(const std::string& name, WeightQuant& out)
{
  for (const auto& [n, v] : quant_names)
    if (name == n) {
      out = v;
      return true;
    }
  return false;
}

std::string weight_quant_names() { return "bf16, fp8_block, fp8_tensor, nvfp4, mxfp4, w4a8"; }

std::string op_class_name(OpClass c)
{
  switch (c) {
  case OpClass::attention:
    return "attention";
  case OpClass::routed_experts:
    return "routed_experts";
  case OpClass::shared_experts:
    return "shared_experts";
  case OpClass::dense_mlp:
    return "dense_mlp";
  case OpClass::lm_head:
    return "lm_head";
  }
  return "?";
}

const OpClass* op_classes_begin() { return classes.data(); }
const OpClass* op_classes_end() { return classes.data() + classes.size(); }

} // namespace dbosim::models

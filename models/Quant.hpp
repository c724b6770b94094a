/* dbosim — the quantization formats a linear layer's weights and activations run in (the scenario's `precision:`
 * keys, docs/dimensions.md) and which op classes a model or scenario sets them for. Priced by models/Precision. */
#pragma once
#include <optional>
#include <string>

namespace dbosim::models {

/** @brief A linear layer's weight x activation format, as AIConfigurator and the engines name them. */
enum class WeightQuant {
  bf16,       ///< BF16 weights and activations
  fp8_block,  ///< FP8 E4M3, one fp32 scale per 128x128 weight block and per 1x128 activation group (DeepSeek, DeepGEMM)
  fp8_tensor, ///< FP8 E4M3, one fp32 scale per tensor (weights and activations)
  nvfp4,      ///< FP4 E2M1, one FP8 E4M3 scale per 16 elements (weights and activations) and one fp32 per tensor
  mxfp4,      ///< FP4 E2M1, one E8M0 scale per 32 elements (weights and activations; OCP MX)
  w4a8        ///< 4-bit weights with one bf16 scale per 128 elements, FP8 activations (TensorRT-LLM W4A8)
};

/** @brief The op classes a precision is set for. */
enum class OpClass { attention, routed_experts, shared_experts, dense_mlp, lm_head };

/** @brief Per op class: the format set by the model (a zoo `precision:` mapping, a HuggingFace quantization_config) or
 *  by the scenario's `precision:` keys; nullopt: the class runs at the model's `dtypes:` and is priced as before. */
struct OpPrecision {
  std::optional<WeightQuant> attention;
  std::optional<WeightQuant> routed_experts;
  std::optional<WeightQuant> shared_experts;
  std::optional<WeightQuant> dense_mlp;
  std::optional<WeightQuant> lm_head;
  std::optional<WeightQuant>& at(OpClass c);
  const std::optional<WeightQuant>& at(OpClass c) const;
  bool operator==(const OpPrecision&) const = default;
};

/** @brief "bf16", "fp8_block", ... as written in YAML. */
std::string weight_quant_name(WeightQuant q);
/** @brief Parses a format name; false if unknown. */
bool parse_weight_quant(const std::string& name, WeightQuant& out);
/** @brief The valid names, for error messages: "bf16, fp8_block, fp8_tensor, nvfp4, mxfp4, w4a8". */
std::string weight_quant_names();
/** @brief "attention", "routed_experts", ... as written in YAML. */
std::string op_class_name(OpClass c);
/** @brief Every op class, in documentation order. */
const OpClass* op_classes_begin();
const OpClass* op_classes_end();

} // namespace dbosim::models

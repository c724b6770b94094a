/* dbosim — the precision section (docs/dimensions.md): the format each op class's linear layers run in, the KV-cache
 * dtype and the all-to-all payload dtypes. Unset keys keep the model's (its zoo `precision:` and `dtypes:`, or its
 * HuggingFace quantization_config). A format the GPU cannot run is an input error naming the key. */
#include "config/ParamHelpers.hpp"
#include "config/YamlMap.hpp"
#include "models/All2AllTable.hpp"
#include "models/Precision.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace dbosim {
namespace {

using models::DType;
using models::OpClass;
using models::WeightQuant;

constexpr const char* section_name = "precision";

const std::vector<std::string>& quant_choices()
{
  static const std::vector<std::string> names{"bf16", "fp8_block", "fp8_tensor", "nvfp4", "mxfp4", "w4a8"};
  return names;
}

std::string op_class_doc(OpClass c)
{
  switch (c) {
  case OpClass::attention:
    return "attention projections (q_a/kv_a, q_b, o_proj; MLA's absorbed BMMs stay BF16)";
  case OpClass::routed_experts:
    return "routed experts' grouped GEMMs";
  case OpClass::shared_experts:
    return "shared expert(s)";
  case OpClass::dense_mlp:
    return "dense layers' MLP";
  case OpClass::lm_head:
    return "LM head";
  }
  return "";
}

ParamDecl quant_param(OpClass c)
{
  const std::string leaf = models::op_class_name(c);
  ParamDecl d{std::string(section_name) + "." + leaf,
              "enum",
              "",
              "model",
              fmt::format("{}", fmt::join(quant_choices(), ", ")),
              fmt::format("Weight x activation format of the {}: its bytes and scales (nvfp4: one E4M3 per 16, mxfp4: "
                          "one E8M0 per 32, fp8_block: fp32 per 128x128 weights / 1x128 activations) and the GPU's "
                          "peak for it; default: the model's quantization_config, else its dtypes",
                          op_class_doc(c)),
              nullptr,
              nullptr};
  d.set_default = [c](Scenario& s) { s.precision.ops.at(c).reset(); };
  d.read        = [c](YamlMap& m, const std::string& key, Scenario& s) {
    WeightQuant q{};
    models::parse_weight_quant(m.get_enum(key, quant_choices()), q);
    s.precision.ops.at(c) = q;
  };
  return d;
}

/** A dtype key whose choices map to DTypes; `unset` (if any) leaves the model's. */
ParamDecl dtype_param(const std::string& leaf, std::vector<std::pair<std::string, std::optional<DType>>> choices,
                      const std::string& def_text, const std::string& doc, std::optional<DType> PrecisionConfig::*field)
{
  std::vector<std::string> names;
  for (const auto& [n, t] : choices)
    names.push_back(n);
  ParamDecl d{std::string(section_name) + "." + leaf,    "enum", "",      def_text,
              fmt::format("{}", fmt::join(names, ", ")), doc,    nullptr, nullptr};
  d.set_default = [field](Scenario& s) { (s.precision.*field).reset(); };
  d.read        = [field, choices, names](YamlMap& m, const std::string& key, Scenario& s) {
    const std::string name = m.get_enum(key, names);
    for (const auto& [n, t] : choices)
      if (n == name)
        s.precision.*field = t;
  };
  return d;
}

/** The formats `hw` can run, for an error's valid list. */
std::string runnable_quants(const models::HwProfile& hw)
{
  std::vector<std::string> ok;
  for (const std::string& n : quant_choices()) {
    WeightQuant q{};
    models::parse_weight_quant(n, q);
    if (models::quant_unsupported(hw, q).empty())
      ok.push_back(n);
  }
  return fmt::format("on {}: {}", hw.name, fmt::join(ok, ", "));
}

} // namespace

void add_precision_params(std::vector<ParamDecl>& p)
{
  for (auto c = models::op_classes_begin(); c != models::op_classes_end(); ++c)
    p.push_back(quant_param(*c));
  p.push_back(dtype_param("kv_cache_dtype", {{"auto", std::nullopt}, {"bf16", DType::bf16}, {"fp8", DType::fp8}},
                          "auto",
                          "KV-cache dtype (vLLM --kv-cache-dtype): the attention kernels' KV bytes and the KV blocks "
                          "that fit in HBM; auto: the model's",
                          &PrecisionConfig::kv_cache_dtype));
  p.push_back(
      dtype_param("dispatch_dtype", {{"bf16", DType::bf16}, {"fp8", DType::fp8}, {"nvfp4", DType::fp4}}, "model",
                  "All-to-all dispatch payload (fp8: one fp32 scale per 128, DeepEP low-latency's; nvfp4: one "
                  "E4M3 per 16, vLLM VLLM_DEEPEPLL_NVFP4_DISPATCH); default: the model's dtypes.dispatch, or BF16 "
                  "where the backend gathers unquantized activations (nccl)",
                  &PrecisionConfig::dispatch_dtype));
  p.push_back(dtype_param("combine_dtype", {{"bf16", DType::bf16}, {"fp8", DType::fp8}, {"nvfp4", DType::fp4}}, "model",
                          "All-to-all combine payload; default: the model's dtypes.combine (BF16)",
                          &PrecisionConfig::combine_dtype));
}

void apply_precision(const YamlMap& root, const YamlMap& section, bool has_section, Scenario& s)
{
  models::ModelSpec& m = s.model;
  for (auto c = models::op_classes_begin(); c != models::op_classes_end(); ++c) {
    const bool set = s.precision.ops.at(*c).has_value();
    if (set)
      m.precision.at(*c) = s.precision.ops.at(*c);
    const auto& q = m.precision.at(*c);
    if (!q)
      continue;
    const std::string why = models::quant_unsupported(s.hw, *q);
    if (why.empty())
      continue;
    if (set && has_section)
      section.fail(models::op_class_name(*c), why, runnable_quants(s.hw));
    root.fail("model",
              fmt::format("model {} runs its {} in {}: {}", m.name, models::op_class_name(*c),
                          models::weight_quant_name(*q), why),
              fmt::format("precision.{}: {}", models::op_class_name(*c), runnable_quants(s.hw)));
  }
  if (s.precision.kv_cache_dtype)
    m.kv_dtype = *s.precision.kv_cache_dtype;
  if (s.precision.dispatch_dtype)
    m.dispatch_dtype = *s.precision.dispatch_dtype;
  else if (!models::all2all_traits_of(s.parallel.backend).quantized_dispatch)
    m.dispatch_dtype = DType::bf16; // the backend moves the activations as the layer holds them
  if (s.precision.combine_dtype)
    m.combine_dtype = *s.precision.combine_dtype;
  const std::pair<const char*, DType> payloads[] = {{"dispatch_dtype", m.dispatch_dtype},
                                                    {"combine_dtype", m.combine_dtype}};
  for (const auto& [leaf, t] : payloads) {
    const std::string why = models::payload_unsupported(s.hw, t);
    if (why.empty())
      continue;
    if (has_section && section.has(leaf))
      section.fail(leaf, why, "bf16, fp8");
    root.fail("model", fmt::format("model {} sends {} payloads: {}", m.name, models::dtype_name(t), why),
              fmt::format("precision.{}: bf16, fp8", leaf));
  }
}

} // namespace dbosim

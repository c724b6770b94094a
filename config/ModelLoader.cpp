#include "config/ModelLoader.hpp"

#include "base/InputError.hpp"
#include "base/StrictJson.hpp"
#include "config/DataDir.hpp"
#include "config/FileMemo.hpp"
#include "config/InputFile.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

namespace dbosim {
namespace fs = std::filesystem;
using models::AttentionKind;
using models::DType;
using models::ModelSpec;

namespace {
/*** Checks shared by the YAML and JSON readers ***/

/** A cross-key problem: `field` is the zoo key path ("moe.top_k"). */
struct Problem {
  std::string field;
  std::string message;
  std::string valid;
};

std::optional<Problem> cross_check(const ModelSpec& m)
{
  if (m.first_k_dense >= m.num_layers)
    return Problem{"first_k_dense", fmt::format("{} leaves no MoE layer of {}", m.first_k_dense, m.num_layers),
                   fmt::format("0..{}", m.num_layers - 1)};
  if (m.first_k_dense > 0 && m.dense_intermediate <= 0)
    return Problem{"dense_intermediate", "must be > 0 when the model has dense layers", ">= 1"};
  if (m.top_k > m.num_routed_experts)
    return Problem{"moe.top_k", fmt::format("{} is more than the {} routed experts", m.top_k, m.num_routed_experts),
                   fmt::format("1..{}", m.num_routed_experts)};
  if ((m.num_shared_experts == 0) != (m.shared_intermediate == 0))
    return Problem{"moe.shared_intermediate",
                   fmt::format("{} does not fit {} shared experts", m.shared_intermediate, m.num_shared_experts),
                   "0 exactly when there is no shared expert"};
  if (m.attention == AttentionKind::gqa && m.gqa.num_heads % m.gqa.num_kv_heads != 0)
    return Problem{"attention.kv_heads",
                   fmt::format("{} does not divide the {} query heads", m.gqa.num_kv_heads, m.gqa.num_heads),
                   "a divisor of heads"};
  if (m.attention == AttentionKind::mla && m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim <= 0)
    return Problem{"attention.qk_rope_head_dim", "qk_nope_head_dim + qk_rope_head_dim must be > 0", ">= 1"};
  return std::nullopt;
}

DType dtype_at(YamlMap& map, const std::string& key)
{
  const std::string text = map.get_string(key);
  DType t                = DType::bf16;
  if (!models::parse_dtype(text, t))
    map.fail(key, fmt::format("unknown dtype '{}'", text), models::dtype_names());
  return t;
}

constexpr long max_dim = 1L << 22;
} // namespace

/*** Zoo and inline YAML ***/

std::string model_zoo_dir() { return (fs::path(data_dir()) / "models" / "zoo").string(); }

std::vector<std::string> list_model_zoo()
{
  std::error_code ec;
  if (!fs::is_directory(model_zoo_dir(), ec))
    throw InputError(model_zoo_dir(), "model zoo directory not found (set DBOSIM_HOME to the dbosim data directory)");
  return list_data_files("models/zoo");
}

namespace {

/** True when the zoo's listing (list_model_zoo) surely holds `name`: its file `path` is a regular .yaml file of the
 *  zoo folder named after it. Without listing the folder (a sweep loads its model at every point); false: list it. */
bool zoo_surely_holds(const std::string& name, const std::string& path)
{
  std::error_code ec;
  const fs::path p(path);
  return fs::is_directory(model_zoo_dir(), ec) && fs::is_regular_file(p, ec) && p.stem() == name &&
         p.extension() == ".yaml";
}

} // namespace

ModelSpec load_model_zoo(const std::string& name_or_path)
{
  const std::string path = resolve_data_file("models/zoo", name_or_path);
  const bool zoo_name    = path != name_or_path;
  if (zoo_name && !zoo_surely_holds(name_or_path, path)) {
    const std::vector<std::string> names = list_model_zoo();
    if (std::find(names.begin(), names.end(), name_or_path) == names.end()) {
      std::string valid;
      for (const auto& n : names)
        valid += (valid.empty() ? "" : ", ") + n;
      throw InputError(model_zoo_dir(), 0, 0, "model", fmt::format("unknown model '{}'", name_or_path), valid);
    }
  }
  static FileMemo<ModelSpec> memo; // keyed by the name too: the name check below depends on it
  return memo.get(name_or_path + '\n' + path, path, [&] {
    YamlMap map(load_yaml_file(path), path, "");
    ModelSpec m = load_model_yaml(map);
    if (zoo_name && m.name != name_or_path)
      map.fail("name", fmt::format("'{}' differs from the file name", m.name), name_or_path);
    return m;
  });
}

ModelSpec load_model_yaml(YamlMap& map)
{
  ModelSpec m;
  m.name               = map.get_string("name");
  m.source             = map.get_string("source");
  m.num_layers         = map.get_int("layers", 1, 10000);
  m.first_k_dense      = map.get_int("first_k_dense", 0, 10000);
  m.hidden             = map.get_int("hidden", 1, max_dim);
  m.vocab              = map.get_int("vocab", 1, 1L << 24);
  m.dense_intermediate = map.get_int("dense_intermediate", 0, max_dim);
  m.mtp_layers         = map.get_int("mtp_layers", 0, 16, 0);
  if (m.source.empty())
    map.fail("source", "must name where the numbers come from");

  YamlMap moe           = map.get_map("moe");
  m.num_routed_experts  = moe.get_int("routed_experts", 1, 1L << 16);
  m.num_shared_experts  = moe.get_int("shared_experts", 0, 1024);
  m.top_k               = moe.get_int("top_k", 1, 1L << 16);
  m.moe_intermediate    = moe.get_int("expert_intermediate", 1, max_dim);
  m.shared_intermediate = moe.get_int("shared_intermediate", 0, max_dim);
  moe.finish();

  YamlMap att            = map.get_map("attention");
  const std::string type = att.get_enum("type", {"mla", "gqa"});
  if (type == "mla") {
    m.attention            = AttentionKind::mla;
    m.mla.num_heads        = att.get_int("heads", 1, 1L << 12);
    m.mla.q_lora_rank      = att.get_int("q_lora_rank", 0, 1L << 16);
    m.mla.kv_lora_rank     = att.get_int("kv_lora_rank", 1, 1L << 16);
    m.mla.qk_nope_head_dim = att.get_int("qk_nope_head_dim", 0, 1L << 12);
    m.mla.qk_rope_head_dim = att.get_int("qk_rope_head_dim", 0, 1L << 12);
    m.mla.v_head_dim       = att.get_int("v_head_dim", 1, 1L << 12);
  } else {
    m.attention        = AttentionKind::gqa;
    m.gqa.num_heads    = att.get_int("heads", 1, 1L << 12);
    m.gqa.num_kv_heads = att.get_int("kv_heads", 1, m.gqa.num_heads);
    m.gqa.head_dim     = att.get_int("head_dim", 1, 1L << 12);
  }
  att.finish();

  YamlMap dt       = map.get_map("dtypes");
  m.weight_dtype   = dtype_at(dt, "weights");
  m.attn_dtype     = dtype_at(dt, "attention");
  m.kv_dtype       = dtype_at(dt, "kv_cache");
  m.dispatch_dtype = dtype_at(dt, "dispatch");
  m.combine_dtype  = dtype_at(dt, "combine");
  dt.finish();
  // Optional: the checkpoint's per-class formats (its quantization_config), priced with their scales.
  if (map.has("precision")) {
    YamlMap pr = map.get_map("precision");
    const std::vector<std::string> names{"bf16", "fp8_block", "fp8_tensor", "nvfp4", "mxfp4", "w4a8"};
    for (auto c = models::op_classes_begin(); c != models::op_classes_end(); ++c) {
      const std::string leaf = models::op_class_name(*c);
      if (!pr.has(leaf))
        continue;
      models::WeightQuant q{};
      models::parse_weight_quant(pr.get_enum(leaf, names), q);
      m.precision.at(*c) = q;
    }
    pr.finish();
  }
  map.finish();

  if (auto p = cross_check(m)) {
    const auto dot = p->field.find('.');
    if (dot == std::string::npos)
      map.fail(p->field, p->message, p->valid);
    const std::string section = p->field.substr(0, dot);
    const std::string key     = p->field.substr(dot + 1);
    (section == "moe" ? moe : att).fail(key, p->message, p->valid);
  }
  return m;
}

/*** Hugging Face config.json ***/

namespace {
using nlohmann::json;

class HfReader {
public:
  HfReader(const json& j, std::string file) : j_(j), file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message, const std::string& valid = "") const
  {
    throw InputError(file_, 0, 0, key, message, valid);
  }
  bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const json& at(const std::string& key) const
  {
    if (!has(key))
      fail(key, "required key is missing");
    return j_.at(key);
  }
  int get_int(const std::string& key, long lo, long hi) const
  {
    const json& v = at(key);
    if (!v.is_number_integer())
      fail(key, fmt::format("expected an integer, got {}", v.dump()), fmt::format("{}..{}", lo, hi));
    const long out = v.get<long>();
    if (out < lo || out > hi)
      fail(key, fmt::format("{} is out of range", out), fmt::format("{}..{}", lo, hi));
    return static_cast<int>(out);
  }
  int get_int(const std::string& key, long lo, long hi, int fallback) const
  {
    return has(key) ? get_int(key, lo, hi) : fallback;
  }
  std::string get_string(const std::string& key) const
  {
    const json& v = at(key);
    if (!v.is_string())
      fail(key, fmt::format("expected a string, got {}", v.dump()));
    return v.get<std::string>();
  }
  /** The first present key of `keys`, or "" if none. */
  std::string first_of(const std::vector<std::string>& keys) const
  {
    for (const auto& k : keys)
      if (has(k))
        return k;
    return "";
  }
  const json& raw() const { return j_; }

private:
  const json& j_;
  std::string file_;
};

json parse_json_file(const std::string& path)
{
  const std::string text = read_input_file(path);
  std::string duplicate;
  try {
    json j = parse_json_unique_keys(text, duplicate);
    if (!duplicate.empty())
      throw InputError(path, 0, 0, duplicate, "duplicate key (JSON keeps one value per key)");
    if (!j.is_object())
      throw InputError(path, "expected a JSON object at the top level");
    return j;
  } catch (const json::exception& e) { // parse_error, and out_of_range for numbers such as 1E1643
    throw InputError(path, fmt::format("not valid JSON: {}", e.what()));
  }
}

std::string hf_name(const std::string& path)
{
  const fs::path p(path);
  if (p.stem() == "config" && p.has_parent_path() && !p.parent_path().filename().empty())
    return p.parent_path().filename().string();
  return p.stem().string();
}

/** HF key that carries each zoo field, for cross-check errors. */
std::string hf_key_for(const std::string& field)
{
  static const std::map<std::string, std::string> keys{
      {"first_k_dense", "first_k_dense_replace"},    {"dense_intermediate", "intermediate_size"},
      {"moe.top_k", "num_experts_per_tok"},          {"moe.shared_intermediate", "n_shared_experts"},
      {"attention.kv_heads", "num_key_value_heads"}, {"attention.qk_rope_head_dim", "qk_rope_head_dim"}};
  auto it = keys.find(field);
  return it == keys.end() ? field : it->second;
}

/** Leading dense layers: first_k_dense_replace (DeepSeek), or mlp_only_layers = [0..k-1] with
 *  decoder_sparse_step = 1 (Qwen-MoE). Interleaved dense layers cannot be expressed by ModelSpec. */
int leading_dense_layers(const HfReader& r, int layers)
{
  if (r.has("moe_layer_freq") && r.get_int("moe_layer_freq", 1, layers) != 1)
    r.fail("moe_layer_freq", "interleaved dense/MoE layers are not modelled", "1");
  if (r.has("decoder_sparse_step") && r.get_int("decoder_sparse_step", 1, layers) != 1)
    r.fail("decoder_sparse_step", "interleaved dense/MoE layers are not modelled", "1");
  int k = r.get_int("first_k_dense_replace", 0, layers, 0);
  if (r.has("mlp_only_layers")) {
    const json& v = r.at("mlp_only_layers");
    if (!v.is_array())
      r.fail("mlp_only_layers", "expected a list of layer indices");
    for (size_t i = 0; i < v.size(); ++i)
      if (!v[i].is_number_integer() || v[i].get<long>() != long(i))
        r.fail("mlp_only_layers",
               fmt::format("{} is not a leading run of layers; interleaved dense layers are not "
                           "modelled",
                           v.dump()),
               "[0, 1, ..., k-1]");
    if (!v.empty() && k != 0)
      r.fail("mlp_only_layers", "given together with first_k_dense_replace");
    k = std::max(k, int(v.size()));
  }
  return k;
}

DType hf_weight_dtype(const HfReader& r)
{
  if (r.has("quantization_config")) {
    const json& q = r.at("quantization_config");
    if (!q.is_object() || !q.contains("quant_method") || !q.at("quant_method").is_string())
      r.fail("quantization_config.quant_method", "required key is missing");
    const std::string method = q.at("quant_method").get<std::string>();
    if (method != "fp8")
      r.fail("quantization_config.quant_method", fmt::format("unsupported quantization '{}'", method), "fp8");
    return DType::fp8;
  }
  const std::string key = r.first_of({"torch_dtype", "dtype"});
  if (key.empty())
    r.fail("torch_dtype", "required key is missing (no quantization_config either)");
  const std::string text = r.get_string(key);
  DType t                = DType::bf16;
  if (!models::parse_dtype(text, t))
    r.fail(key, fmt::format("unknown dtype '{}'", text), "bfloat16, float16, float32, float8_e4m3fn");
  return t;
}

/** The attention projections' dtype: an FP8 checkpoint quantizes them like every other linear layer (DeepSeek-V3/R1,
 *  Kimi-K2: weight_block_size 128x128), unless quantization_config lists attention modules among those it leaves in
 *  BF16 (`modules_to_not_convert` / `ignored_layers`). MLA's absorbed products and the router stay BF16 anyway. */
DType hf_attention_dtype(const HfReader& r, DType weights)
{
  if (weights != DType::fp8 || !r.has("quantization_config"))
    return weights;
  const json& q = r.at("quantization_config");
  for (const char* list : {"modules_to_not_convert", "ignored_layers"}) {
    if (!q.contains(list) || !q.at(list).is_array())
      continue;
    for (const auto& name : q.at(list))
      if (name.is_string() && name.get<std::string>().find("attn") != std::string::npos)
        return DType::bf16;
  }
  return weights;
}
} // namespace

ModelSpec load_hf_config(const std::string& json_path)
{
  const json root = parse_json_file(json_path);
  // Multimodal wrappers (Kimi-K2.5 style) keep the language model in text_config.
  const json& body = root.contains("text_config") && root.at("text_config").is_object() ? root.at("text_config") : root;
  const HfReader r(body, json_path);

  ModelSpec m;
  m.name                 = hf_name(json_path);
  m.source               = json_path;
  const std::string type = r.get_string("model_type");
  static const std::vector<std::string> mla_types{"deepseek_v2", "deepseek_v3", "kimi_k2"};
  static const std::vector<std::string> gqa_types{"qwen2_moe", "qwen3_moe", "mixtral"};
  const bool mla = std::find(mla_types.begin(), mla_types.end(), type) != mla_types.end();
  const bool gqa = std::find(gqa_types.begin(), gqa_types.end(), type) != gqa_types.end();
  if (!mla && !gqa)
    r.fail("model_type", fmt::format("unsupported model type '{}'", type),
           "deepseek_v2, deepseek_v3, kimi_k2, qwen2_moe, qwen3_moe, mixtral");

  m.num_layers         = r.get_int("num_hidden_layers", 1, 10000);
  m.hidden             = r.get_int("hidden_size", 1, max_dim);
  m.vocab              = r.get_int("vocab_size", 1, 1L << 24);
  m.dense_intermediate = r.get_int("intermediate_size", 1, max_dim);
  m.first_k_dense      = leading_dense_layers(r, m.num_layers);
  m.mtp_layers         = r.get_int("num_nextn_predict_layers", 0, 16, 0);

  const std::string experts_key = r.first_of({"n_routed_experts", "num_experts", "num_local_experts"});
  if (experts_key.empty())
    r.fail("n_routed_experts", "required key is missing (also looked for num_experts, num_local_experts)");
  m.num_routed_experts = r.get_int(experts_key, 1, 1L << 16);
  m.top_k              = r.get_int("num_experts_per_tok", 1, 1L << 16);
  // Mixtral's experts are as wide as its intermediate_size; the others state moe_intermediate_size.
  m.moe_intermediate =
      r.has("moe_intermediate_size") ? r.get_int("moe_intermediate_size", 1, max_dim) : m.dense_intermediate;
  if (r.has("n_shared_experts")) {
    m.num_shared_experts = r.get_int("n_shared_experts", 0, 1024);
    const long total     = long(m.num_shared_experts) * m.moe_intermediate;
    if (total > max_dim)
      r.fail("n_shared_experts",
             fmt::format("{} x moe_intermediate_size {} is too wide", m.num_shared_experts, m.moe_intermediate),
             fmt::format("total width <= {}", max_dim));
    m.shared_intermediate = static_cast<int>(total);
  } else if (r.has("shared_expert_intermediate_size")) {
    m.shared_intermediate = r.get_int("shared_expert_intermediate_size", 0, max_dim);
    m.num_shared_experts  = m.shared_intermediate > 0 ? 1 : 0;
  }

  if (mla) {
    m.attention            = AttentionKind::mla;
    m.mla.num_heads        = r.get_int("num_attention_heads", 1, 1L << 12);
    m.mla.q_lora_rank      = r.get_int("q_lora_rank", 0, 1L << 16, 0); // null in DeepSeek-V2-Lite
    m.mla.kv_lora_rank     = r.get_int("kv_lora_rank", 1, 1L << 16);
    m.mla.qk_nope_head_dim = r.get_int("qk_nope_head_dim", 0, 1L << 12);
    m.mla.qk_rope_head_dim = r.get_int("qk_rope_head_dim", 0, 1L << 12);
    m.mla.v_head_dim       = r.get_int("v_head_dim", 1, 1L << 12);
  } else {
    m.attention        = AttentionKind::gqa;
    m.gqa.num_heads    = r.get_int("num_attention_heads", 1, 1L << 12);
    m.gqa.num_kv_heads = r.get_int("num_key_value_heads", 1, m.gqa.num_heads, m.gqa.num_heads);
    if (r.has("head_dim")) {
      m.gqa.head_dim = r.get_int("head_dim", 1, 1L << 12);
    } else {
      if (m.hidden % m.gqa.num_heads != 0)
        r.fail("head_dim", fmt::format("missing, and hidden_size {} is not a multiple of num_attention_heads {}",
                                       m.hidden, m.gqa.num_heads));
      m.gqa.head_dim = m.hidden / m.gqa.num_heads;
    }
  }

  m.weight_dtype   = hf_weight_dtype(r);
  m.attn_dtype     = hf_attention_dtype(r, m.weight_dtype);
  m.kv_dtype       = DType::bf16;
  m.dispatch_dtype = DType::fp8;
  m.combine_dtype  = DType::bf16;

  if (auto p = cross_check(m))
    r.fail(hf_key_for(p->field), p->message, p->valid);
  return m;
}

/*** Printing ***/

std::string describe_attention(const ModelSpec& m)
{
  if (m.attention == AttentionKind::mla)
    return fmt::format("MLA {} heads, q_lora {}, kv_lora {}, qk {}+{}, v {}", m.mla.num_heads,
                       m.mla.q_lora_rank > 0 ? std::to_string(m.mla.q_lora_rank) : std::string("none"),
                       m.mla.kv_lora_rank, m.mla.qk_nope_head_dim, m.mla.qk_rope_head_dim, m.mla.v_head_dim);
  return fmt::format("GQA {} q / {} kv heads x {}", m.gqa.num_heads, m.gqa.num_kv_heads, m.gqa.head_dim);
}

std::string model_zoo_table()
{
  std::string out = fmt::format("{:<18} {:>6} {:>6} {:>14} {:>5} {:>7}  {:<7} {}\n", "model", "layers", "dense",
                                "experts", "top-k", "hidden", "weights", "attention");
  for (const auto& name : list_model_zoo()) {
    const ModelSpec m         = load_model_zoo(name);
    const std::string experts = m.num_shared_experts > 0
                                    ? fmt::format("{}+{} shared", m.num_routed_experts, m.num_shared_experts)
                                    : fmt::format("{}", m.num_routed_experts);
    out += fmt::format("{:<18} {:>6} {:>6} {:>14} {:>5} {:>7}  {:<7} {}\n", m.name, m.num_layers, m.first_k_dense,
                       experts, m.top_k, m.hidden, models::dtype_name(m.weight_dtype), describe_attention(m));
  }
  return out;
}

} // namespace dbosim

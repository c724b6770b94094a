/* dbosim — model architectures from the zoo (models/zoo/<name>.yaml), from an inline `model:` mapping of a
 * scenario (same keys), or imported from a Hugging Face config.json. All paths end in a validated ModelSpec;
 * bad input is an InputError naming the file, the line (YAML) and the key.
 *
 * Zoo/inline keys (all required):
 *   name, source, layers, first_k_dense, hidden, vocab, dense_intermediate,
 *   moe: {routed_experts, shared_experts, top_k, expert_intermediate, shared_intermediate},
 *   attention: {type: mla, heads, q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim}
 *            | {type: gqa, heads, kv_heads, head_dim},
 *   dtypes: {weights, attention, kv_cache, dispatch, combine}. */
#pragma once
#include "config/YamlMap.hpp"
#include "models/ModelSpec.hpp"

#include <string>
#include <vector>

namespace dbosim {

/** @brief Directory of the zoo: data_dir()/models/zoo ($DBOSIM_HOME, else the source tree). */
std::string model_zoo_dir();

/** @brief Names of the zoo's models (file stems of the .yaml files in models/zoo), sorted. */
std::vector<std::string> list_model_zoo();

/** @brief The zoo model `name` (models/zoo/<name>.yaml; its `name:` must equal the file stem), or a model YAML
 *  file when `name_or_path` is a path (contains '/' or ends in .yaml). Unknown name: InputError (line 0) listing
 *  the valid names. */
models::ModelSpec load_model_zoo(const std::string& name_or_path);

/** @brief A model from a zoo file or from a scenario's inline `model:` mapping (the same keys). Reads every key of
 *  `map` and rejects unknown ones. */
models::ModelSpec load_model_yaml(YamlMap& map);

/** @brief A model from a Hugging Face config.json (DeepSeek-V2/V3, Kimi-K2, Qwen2/3-MoE, Mixtral). Its name is the
 *  file stem, or the parent directory's name when the file is called config.json. Serving dtypes HF does not
 *  state: attention bf16, KV cache bf16, dispatch fp8, combine bf16; weights fp8 when
 *  quantization_config.quant_method is "fp8", else torch_dtype. */
models::ModelSpec load_hf_config(const std::string& json_path);

/** @brief One line describing the attention ("MLA 128 heads, q_lora 1536, kv_lora 512, d 128+64/128"). */
std::string describe_attention(const models::ModelSpec& m);

/** @brief The zoo as a printed table (name, layers, experts, top-k, attention, dtypes) for `dbosim models`. */
std::string model_zoo_table();

} // namespace dbosim

/* dbosim — model architectures from the zoo (models/zoo/<name>.yaml), an inline mapping, or a HF config.json. */
#pragma once
#include "config/YamlMap.hpp"
#include "models/ModelSpec.hpp"

#include <string>
#include <vector>

namespace dbosim {

/** @brief Loads models/zoo/<name>.yaml. */
models::ModelSpec load_model_zoo(const std::string& name);
/** @brief Reads a model mapping (a zoo file's top level, or a scenario's inline `model:`). */
models::ModelSpec load_model_yaml(YamlMap& map);
/** @brief Reads a HuggingFace config.json. */
models::ModelSpec load_hf_config(const std::string& json_path);
/** @brief Names of the zoo's models, sorted. */
std::vector<std::string> list_model_zoo();

} // namespace dbosim

/* libFuzzer target: model YAML (a zoo file, or a scenario's inline model mapping). */
#include "base/InputError.hpp"
#include "config/ModelLoader.hpp"
#include "config/YamlMap.hpp"
#include "fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    const std::string path = dbosim::fuzz::input_file(data, size, ".yaml");
    dbosim::YamlMap map(dbosim::load_yaml_file(path), path, "");
    dbosim::load_model_yaml(map);
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

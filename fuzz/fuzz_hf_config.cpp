/* libFuzzer target: HuggingFace config.json. */
#include "base/InputError.hpp"
#include "config/ModelLoader.hpp"
#include "fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::load_hf_config(dbosim::fuzz::input_file(data, size, ".json"));
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

/* libFuzzer target: scenario YAML. Only InputError may escape the loader; anything else is a finding. */
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::load_scenario(dbosim::fuzz::input_file(data, size, ".yaml"));
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

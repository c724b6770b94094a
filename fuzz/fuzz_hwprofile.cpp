/* libFuzzer target: hardware-profile YAML. */
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::load_hw_profile(dbosim::fuzz::input_file(data, size, ".yaml"));
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

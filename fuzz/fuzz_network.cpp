/* libFuzzer target: network facts YAML (hwprofiles/network/<name>.yaml, the cluster models' link facts). */
#include "base/InputError.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::load_network_facts(dbosim::fuzz::input_file(data, size, ".yaml"));
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

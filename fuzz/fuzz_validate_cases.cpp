/* libFuzzer target: a validate reference-case file (a YAML file of validate/cases/), read and predicted as
 * `dbosim validate --cases DIR` does. */
#include "base/InputError.hpp"
#include "fuzz/FuzzInput.hpp"
#include "validate/RefCases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    const std::string dir = dbosim::fuzz::scratch_dir() + "/cases";
    std::filesystem::create_directories(dir);
    dbosim::fuzz::write_input(dir + "/case.yaml", data, size);
    dbosim::validate::run_reference_cases(dir);
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

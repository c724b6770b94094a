/* libFuzzer target: a validate e2e case file (validate/cases/e2e*.yaml), read and checked as `dbosim validate` does
 * before it runs anything (each arm's scenario loaded; no simulation). */
#include "base/InputError.hpp"
#include "fuzz/FuzzInput.hpp"
#include "validate/E2eCases.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    const std::string dir = dbosim::fuzz::scratch_dir() + "/e2e";
    std::filesystem::create_directories(dir);
    dbosim::fuzz::write_input(dir + "/e2e_case.yaml", data, size);
    dbosim::validate::check_e2e_cases(dir);
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

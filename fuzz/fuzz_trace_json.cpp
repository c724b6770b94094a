/* libFuzzer target: an imported measured trace, Chrome trace JSON (`dbosim validate --trace`). */
#include "base/InputError.hpp"
#include "fuzz/FuzzInput.hpp"
#include "validate/TraceImport.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::validate::compare_traces(dbosim::fuzz::input_file(data, size, ".json"), "");
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

/* libFuzzer target: serving request trace CSV (workload.trace: arrival_s,input_len,output_len). */
#include "base/InputError.hpp"
#include "fuzz/FuzzInput.hpp"
#include "serving/Workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::serving::read_request_trace(dbosim::fuzz::input_file(data, size, ".csv"));
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

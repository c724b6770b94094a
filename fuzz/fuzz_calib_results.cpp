/* libFuzzer target: calibration raw-results JSON lines (calibrate/ResultsStore, read by the fitter). */
#include "base/InputError.hpp"
#include "calibrate/ResultsStore.hpp"
#include "fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::calib::ResultsStore::read_file(dbosim::fuzz::input_file(data, size, ".jsonl"));
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

/* libFuzzer target: the expert-routing histogram file (cluster.routing_histogram). */
#include "base/InputError.hpp"
#include "config/RoutingHistogram.hpp"
#include "fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    dbosim::load_routing_histogram(dbosim::fuzz::input_file(data, size, ".yaml"));
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

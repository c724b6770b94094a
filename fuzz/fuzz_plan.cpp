/* libFuzzer target: capacity-plan YAML (plan: and sweep: sections, the rest a scenario; every point checked). */
#include "base/InputError.hpp"
#include "fuzz/FuzzInput.hpp"
#include "plan/PlanSpec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  try {
    const std::string dir = dbosim::fuzz::scratch_dir();
    dbosim::plan::load_plan(dbosim::fuzz::write_input(dir + "/plan.yaml", data, size), dir);
  } catch (const dbosim::InputError&) {
  }
  return 0;
}

/* dbosim — the precision part of an engine launch: the KV-cache dtype flag, the quantization flag where the engine
 * does not read it from the checkpoint, the NVFP4 dispatch switch, and a note for each precision.* weight format (the
 * checkpoint's). The payload keys no flag sets are plan/UnsaidSettings.cpp's. Internal to plan/. */
#pragma once
#include "config/EngineTable.hpp"
#include "config/Scenario.hpp"

#include <string>
#include <utility>
#include <vector>

namespace dbosim::plan {

struct PrecisionLaunch {
  std::string args;                                     ///< flags to append to the command (" --kv-cache-dtype fp8")
  std::vector<std::pair<std::string, std::string>> env; ///< environment variables
  std::string trtllm_options;                           ///< TensorRT-LLM extra-llm-api-config.yml entries ("k: v;")
  std::vector<std::string> notes;                       ///< "# precision.KEY VALUE: ..." lines
};

/** @brief The precision flags of `s` (its model after the precision.* keys) for the engine family `f`. */
PrecisionLaunch precision_launch(const Scenario& s, LaunchFamily f);

} // namespace dbosim::plan

/* dbosim — the one place that decides which of a scenario's settings its engine can be told: each setting dbosim
 * models that no flag of the engine (config/EngineTable.hpp row) sets and that the engine does not run by default.
 * Both launch builders (plan/LaunchCommand.cpp for vLLM, plan/EngineLaunches.cpp for SGLang and TensorRT-LLM) print
 * these as their "not a ... flag" notes, and a plan (plan/PlanSpec.cpp) drops a point whose swept key is one of them:
 * a plan searches only points an engine can be launched to run. Internal to plan/. */
#pragma once
#include "config/Scenario.hpp"

#include <string>
#include <vector>

namespace dbosim::plan {

/** @brief A setting of a scenario its engine's launch cannot express. */
struct UnsaidSetting {
  std::string key;  ///< the scenario key, as a sweep names it ("overlap.async_combine")
  std::string note; ///< the launch's note, "# not a vLLM flag: ..."
};

/** @brief Every setting of `s` its engine cannot be told, in the order the launch notes list them; empty for an
 *  engine without a public launch command (LaunchFamily::none: its launch is one note). */
std::vector<UnsaidSetting> unsaid_settings(const Scenario& s);

/** @brief Whether `s` runs its dispatch in NVFP4 the way vLLM is told to: DeepEP low-latency with NVFP4 experts,
 *  VLLM_DEEPEPLL_NVFP4_DISPATCH=1 (vllm/envs.py; read by the DeepEP LL prepare/finalize). */
bool vllm_nvfp4_dispatch(const Scenario& s);

/** @brief Whether the swept key `swept` names `key` or a map holding it ("overlap" holds "overlap.schedule"). */
bool sweeps_key(const std::string& swept, const std::string& key);

} // namespace dbosim::plan

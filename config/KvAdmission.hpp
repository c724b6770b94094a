/* dbosim — how a serving engine admits a request against its KV cache (scheduler.kv_admission). Its own header so
 * that the scenario's scheduler keys and the engine table (whose rows carry each engine's default) share it. */
#pragma once

namespace dbosim {

enum class KvAdmission {
  engine_default, ///< `auto`: the engine row's policy (config/EngineTable.hpp)
  preempt,        ///< admit on the prompt's blocks; when blocks run out, preempt by recompute (vLLM V1)
  reserve,        ///< admit only when the prompt and every output token fit; never preempt (TensorRT-LLM's default)
};

/** @brief The scenario's spelling of a policy. */
inline const char* kv_admission_name(KvAdmission k)
{
  switch (k) {
  case KvAdmission::engine_default:
    return "auto";
  case KvAdmission::preempt:
    return "preempt";
  case KvAdmission::reserve:
    return "reserve";
  }
  return "auto";
}

} // namespace dbosim

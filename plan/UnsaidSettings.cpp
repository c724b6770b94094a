#include "plan/UnsaidSettings.hpp"

#include "config/EngineTable.hpp"
#include "models/All2AllTable.hpp"
#include "models/Quant.hpp"

#include <fmt/format.h>

#include <string_view>

namespace dbosim::plan {
namespace {

/** A payload dtype as the precision.* keys spell it (fp4 is "nvfp4" there). */
std::string payload_name(models::DType t) { return t == models::DType::fp4 ? "nvfp4" : models::dtype_name(t); }

/** Whether the engine runs the scenario's overlap.schedule: its row's schedule under DBO; without DBO serial, or on
 *  vLLM also async_combine (whether vLLM can be told async_combine is overlap.async_combine's own question). */
bool runs_schedule(const Scenario& s, const ServingEngine& e)
{
  if (!s.overlap.schedule)
    return true;
  const sim::ScheduleId sch = *s.overlap.schedule;
  if (s.overlap.dbo_enabled())
    return sch == engine_schedule(e, s.step.phase == models::Phase::prefill);
  return sch == sim::ScheduleId::serial ||
         (e.launch == LaunchFamily::vllm_serve && sch == sim::ScheduleId::async_combine);
}

/** What a check needs: the scenario, its engine's row, and the list the settings go to. */
struct Unsaid {
  const Scenario& s;
  const ServingEngine& e;
  bool vllm;
  std::vector<UnsaidSetting>& out;
  void not_a_flag(const char* key, const std::string& text)
  {
    out.push_back({key, fmt::format("# not a {} flag: {}", e.label, text)});
  }
};

/** The all-to-all, KV admission and the dispatch and combine payloads. */
void unsaid_comm_settings(Unsaid& u)
{
  const Scenario& s      = u.s;
  const ServingEngine& e = u.e;
  const bool vllm        = u.vllm;
  // The all-to-all: SGLang selects DeepEP only (its --deepep-mode, plan/EngineLaunches.cpp); vLLM and TensorRT-LLM
  // name every backend of the table or run their own.
  if (e.launch == LaunchFamily::sglang_launch_server && s.parallel.ep > 1 &&
      s.parallel.backend != models::All2AllBackend::deepep_low_latency &&
      s.parallel.backend != models::All2AllBackend::deepep_high_throughput)
    u.out.push_back({"overlap.all2all_backend",
                     fmt::format("# not a SGLang all-to-all: {} (SGLang's EP without DeepEP gathers tokens)",
                                 models::backend_name(s.parallel.backend))});

  // KV admission: TensorRT-LLM's capacity scheduler spells either policy (plan/EngineLaunches.cpp, trtllm_launch);
  // vLLM and SGLang run their own.
  const KvAdmission kv = resolved_kv_admission(s.scheduler.kv_admission, s.engine);
  if (e.launch != LaunchFamily::trtllm_serve && kv != e.kv_admission)
    u.not_a_flag("scheduler.kv_admission",
                 fmt::format("scheduler.kv_admission {}{}", kv_admission_name(kv),
                             vllm ? " (vLLM admits on the prompt's blocks and preempts)" : ""));

  // Dispatch and combine payloads: the engine picks them from the experts' quantization; vLLM's one switch is the
  // NVFP4 low-latency dispatch (vllm_nvfp4_dispatch).
  if (s.parallel.ep > 1 && s.model.dispatch_dtype == models::DType::fp4) {
    if (!(vllm && vllm_nvfp4_dispatch(s)))
      u.not_a_flag("precision.dispatch_dtype",
                   fmt::format("precision.dispatch_dtype nvfp4 with {}{}", models::backend_name(s.parallel.backend),
                               vllm ? " (vLLM's NVFP4 dispatch is deepep_low_latency with NVFP4 experts: "
                                      "VLLM_DEEPEPLL_NVFP4_DISPATCH)"
                                    : ""));
  } else if (s.precision.dispatch_dtype) {
    u.not_a_flag("precision.dispatch_dtype",
                 fmt::format("precision.dispatch_dtype {} (the engine picks the dispatch payload from the experts' "
                             "quantization)",
                             payload_name(*s.precision.dispatch_dtype)));
  }
  if (s.precision.combine_dtype)
    u.not_a_flag("precision.combine_dtype",
                 fmt::format("precision.combine_dtype {} (the engine picks the combine payload)",
                             payload_name(*s.precision.combine_dtype)));
}

/** DBO, the schedule and async combine. */
void unsaid_overlap_settings(Unsaid& u)
{
  const Scenario& s      = u.s;
  const ServingEngine& e = u.e;
  const bool vllm        = u.vllm;
  // DBO: vLLM's --enable-dbo and SGLang's --enable-two-batch-overlap; TensorRT-LLM's recipes have none.
  if (e.launch == LaunchFamily::trtllm_serve && s.overlap.dbo_enabled())
    u.not_a_flag("overlap.enable_dbo", "overlap.enable_dbo (dbosim runs vLLM's DBO order for the split steps)");
  if (!runs_schedule(s, e))
    u.not_a_flag("overlap.schedule",
                 vllm
                     ? fmt::format("overlap.schedule {} is a dbosim schedule; vLLM runs {}",
                                   sim::schedule_name(*s.overlap.schedule),
                                   s.overlap.dbo_enabled() ? "its own DBO order (--enable-dbo)" : "no overlap schedule")
                     : fmt::format("overlap.schedule {} (a dbosim schedule)", sim::schedule_name(*s.overlap.schedule)));
  // Async combine: the row's async_combine_backend is the --all2all-backend whose finalize_async runs it (vLLM's
  // deepep_v2 from its 2026-09 row on); any other backend or engine cannot be told.
  if (s.overlap.async_combine && (!*e.async_combine_backend || std::string_view(e.async_combine_backend) !=
                                                                   models::backend_name(s.parallel.backend)))
    u.not_a_flag("overlap.async_combine",
                 vllm ? fmt::format("overlap.async_combine is DeepEP v2's finalize_async, used by --all2all-backend "
                                    "deepep_v2{}",
                                    s.overlap.dbo_enabled()
                                        ? " only without DBO (vLLM keeps the combine synchronous under DBO)"
                                        : "")
                      : "overlap.async_combine (vLLM DeepEP v2's finalize_async)");
}

/** Speculative decoding, the host sync, the MoE DP chunk and DP request assignment. */
void unsaid_execution_settings(Unsaid& u)
{
  const Scenario& s      = u.s;
  const ServingEngine& e = u.e;
  const bool vllm        = u.vllm;
  if (s.speculative.enabled() && !vllm)
    u.not_a_flag("speculative_config", "speculative_config (vLLM's --speculative-config; not translated)");
  if (s.execution.host_sync_after_comm)
    u.not_a_flag("execution.host_sync_after_comm",
                 "execution.host_sync_after_comm (a host synchronize after each dispatch and combine: a code change in "
                 "the ROCm DeepEP high-throughput path)");
  // vLLM's MoE DP chunk is VLLM_MOE_DP_CHUNK_SIZE (plan/LaunchCommand.cpp); the others have no chunk loop.
  if (!vllm && s.execution.moe_dp_chunk_tokens > 0 && s.execution.moe_dp_chunk_tokens != e.moe_dp_chunk_tokens)
    u.not_a_flag("execution.moe_dp_chunk_tokens",
                 fmt::format("execution.moe_dp_chunk_tokens {} (vLLM's VLLM_MOE_DP_CHUNK_SIZE)",
                             s.execution.moe_dp_chunk_tokens));
  if (vllm && s.scheduler.dp_least_loaded)
    u.not_a_flag("scheduler.dp_least_loaded",
                 "scheduler.dp_least_loaded (vLLM's front end assigns requests to DP ranks itself)");
}

} // namespace

bool vllm_nvfp4_dispatch(const Scenario& s)
{
  return s.parallel.ep > 1 && s.model.dispatch_dtype == models::DType::fp4 &&
         s.parallel.backend == models::All2AllBackend::deepep_low_latency &&
         s.model.precision.routed_experts == models::WeightQuant::nvfp4;
}

bool sweeps_key(const std::string& swept, const std::string& key)
{
  return swept == key ||
         (key.size() > swept.size() && key.compare(0, swept.size(), swept) == 0 && key[swept.size()] == '.');
}

std::vector<UnsaidSetting> unsaid_settings(const Scenario& s)
{
  const ServingEngine& e = engine_row(s.engine);
  std::vector<UnsaidSetting> out;
  if (e.launch == LaunchFamily::none)
    return out;
  Unsaid u{s, e, e.launch == LaunchFamily::vllm_serve, out};
  unsaid_comm_settings(u);
  unsaid_overlap_settings(u);
  unsaid_execution_settings(u);
  return out;
}

} // namespace dbosim::plan

/* dbosim — the serving engines, one row per engine version, with the rules dbosim takes from it. The scenario's
 * `engine:` key names a row (`vllm`, or pinned `vllm@0.11`); every decision that depends on the engine (the default
 * overlap.schedule, the launch command's family and flag spellings) reads a field of its row, never the engine's
 * name. Each rule carries its source: a file and function at a commit, or a URL (docs/engines-evidence.md collects
 * them). Header-only and free of engine (SimGrid) types, so that the scenario reader, the plan's launch text and the
 * CLI list the same rows. Adding a row: one entry here (docs/engines.md); the static_assert below and
 * tests/engine_table_test.cpp check it. Kernel costs per engine are not rows' business yet: every row runs the same
 * cost models. */
#pragma once

#include "config/KvAdmission.hpp"
#include "config/ScheduleTable.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dbosim {

/** @brief The command line an engine is launched with; plan/LaunchCommand.cpp binds each to its builder. */
enum class LaunchFamily {
  vllm_serve,           ///< `vllm serve MODEL ...`
  sglang_launch_server, ///< `python -m sglang.launch_server --model-path MODEL ...`
  trtllm_serve,         ///< `trtllm-serve MODEL ...`
  none,                 ///< no public launch command (an in-house system): the plan prints a note only
};

/** @brief One rule of an engine and where it was read. */
struct EngineRule {
  const char* rule;   ///< what the engine does, in one line
  const char* source; ///< file and function at a commit, or a URL
};

/** @brief A row of the engine table (see the file's comment). */
struct ServingEngine {
  const char* name;                 ///< the scenario's `engine:` value
  const char* version;              ///< the version this row models (`engine: NAME@VERSION`)
  const char* label;                ///< the engine's own spelling, for output ("vLLM")
  bool is_default;                  ///< the row a bare `engine: NAME` names (one per name)
  sim::ScheduleId decode_schedule;  ///< overlap.schedule of a decode step when the scenario sets none
  sim::ScheduleId prefill_schedule; ///< overlap.schedule of a prefill step when the scenario sets none
  LaunchFamily launch;              ///< the launch command's family
  const char* launch_text;          ///< how the family's command starts ("" for none)
  /** The flag (with its value) that selects DeepEP as the experts' all-to-all, followed by --deepep-mode; "" where
   *  the engine names its backend otherwise (vLLM: --all2all-backend with the all-to-all table's vllm_name) */
  const char* deepep_flag;
  /** The --all2all-backend whose finalize_async runs overlap.async_combine when a step is not split ("" : the engine
   *  cannot be told async_combine; plan/UnsaidSettings.cpp) */
  const char* async_combine_backend;
  EngineRule schedule_rule;     ///< why the default schedules
  EngineRule launch_rule;       ///< where the launch flags are spelled
  EngineRule cuda_graph_rule;   ///< when a step replays a CUDA graph
  EngineRule dp_padding_rule;   ///< how DP ranks pad their tokens
  KvAdmission kv_admission;     ///< scheduler.kv_admission under `auto`: preempt or reserve (never engine_default)
  EngineRule kv_admission_rule; ///< how the engine admits requests against its KV cache
  int moe_dp_chunk_tokens;      ///< execution.moe_dp_chunk_tokens under 0: its MoE DP chunk (0: no chunk loop)
  EngineRule moe_chunk_rule;    ///< how many dispatch/combine rounds a MoE layer makes
  /** Under vLLM's DBO, DeepEP high-throughput's dispatch and combine wait on the compute stream's tail as it stands
   *  after the micro-batch thread's yield: the compute the other micro-batch queued meanwhile included. */
  bool dbo_ht_waits_compute_tail;
  EngineRule dbo_ht_event_rule; ///< which compute a DBO collective of DeepEP high-throughput waits for
};

/** @brief Every row's rules, in the order `dbosim engines` and --explain print them. */
struct NamedRule {
  const char* what;
  EngineRule ServingEngine::*rule;
};
inline constexpr NamedRule engine_rules[] = {
    {"schedule", &ServingEngine::schedule_rule},         {"launch", &ServingEngine::launch_rule},
    {"cuda_graph", &ServingEngine::cuda_graph_rule},     {"dp_padding", &ServingEngine::dp_padding_rule},
    {"kv_admission", &ServingEngine::kv_admission_rule}, {"moe_chunk", &ServingEngine::moe_chunk_rule},
    {"dbo_ht_event", &ServingEngine::dbo_ht_event_rule}};

// clang-format off
inline constexpr ServingEngine serving_engines[] = {
  {
    .name = "vllm", .version = "0.11", .label = "vLLM", .is_default = true,
    .decode_schedule = sim::ScheduleId::dbo, .prefill_schedule = sim::ScheduleId::dbo,
    .launch = LaunchFamily::vllm_serve, .launch_text = "vllm serve", .deepep_flag = "", .async_combine_backend = "",
    .schedule_rule = {"DBO (--enable-dbo) splits a step above its token threshold into two micro-batches; an unsplit "
                      "step runs serial, or async_combine with a finalize_async backend",
                      "vllm/v1/worker/ubatch_utils.py: check_ubatch_thresholds @015d6f9d"},
    .launch_rule = {"parallel, scheduler and compilation flags of EngineArgs",
                    "vllm/engine/arg_utils.py: EngineArgs.add_cli_args @99d7eb5d"},
    .cuda_graph_rule = {"capture sizes 1, 2, 4, 8..248 step 8, 256..max step 16, max = min(2 x max_num_seqs, 512); "
                        "a step above the largest runs eagerly; the graph mode is the minimum over DP ranks",
                        "vllm/config/compilation.py: max_cudagraph_capture_size @ee525ce4; "
                        "vllm/v1/worker/dp_utils.py: coordinate_batch_across_dp @00746147"},
    .dp_padding_rule = {"with graphs or DBO on, every DP rank runs the largest padded token count of any rank",
                        "vllm/v1/worker/dp_utils.py: _synchronize_dp_ranks @00746147"},
    .kv_admission = KvAdmission::preempt,
    .kv_admission_rule = {"admits a waiting request when its prompt's blocks fit; when a running request's next block "
                          "does not, preempts from the back of the running list (recompute)",
                          "vllm/v1/core/sched/scheduler.py: Scheduler.schedule @b4622cf9"},
    .moe_dp_chunk_tokens = 256,
    .moe_chunk_rule = {"with DeepEP low-latency (a masked buffer of VLLM_MOE_DP_CHUNK_SIZE tokens per rank, default "
                       "256) each MoE layer loops over the largest DP rank's tokens in chunks: a dispatch, the "
                       "experts and a combine per chunk, every rank the same number of rounds",
                       "vllm/model_executor/layers/fused_moe/layer.py: FusedMoE.forward_impl_chunked @c439a139; "
                       "vllm/envs.py: VLLM_MOE_DP_CHUNK_SIZE @f218f9c2"},
    .dbo_ht_waits_compute_tail = true,
    .dbo_ht_event_rule = {"under DBO, DeepEP high-throughput's dispatch and combine capture their previous_event on the "
                          "compute stream after the thread's yield, so each waits for the compute the other "
                          "micro-batch queued meanwhile: D and C overlap almost nothing (one combine overlaps the "
                          "other micro-batch's attention)",
                          "vllm/model_executor/layers/fused_moe/deepep_ht_prepare_finalize.py: "
                          "DeepEPHTPrepareAndFinalize._do_dispatch and _finalize (dbo_get_previous_event after "
                          "dbo_yield_and_switch_from_compute_to_comm, from vllm-project/vllm PR #24845); the trace in "
                          "https://github.com/vllm-project/vllm/pull/38451"},
  },
  {
    .name = "vllm", .version = "2026-09", .label = "vLLM", .is_default = false,
    .decode_schedule = sim::ScheduleId::dbo, .prefill_schedule = sim::ScheduleId::dbo,
    .launch = LaunchFamily::vllm_serve, .launch_text = "vllm serve", .deepep_flag = "",
    // finalize_async of the deepep_v2 backend: vllm/model_executor/layers/fused_moe/prepare_finalize/deepep_v2.py
    // (https://github.com/vllm-project/vllm/pull/52781, docs/domain.md §2)
    .async_combine_backend = "deepep_v2",
    .schedule_rule = {"as 0.11; DeepEP v2's finalize_async overlaps the shared expert with the combine when DBO is "
                      "off (the async_combine schedule)",
                      "https://github.com/vllm-project/vllm/pull/52781"},
    .launch_rule = {"parallel, scheduler and compilation flags of EngineArgs; --all2all-backend deepep_v2",
                    "vllm/engine/arg_utils.py: EngineArgs.add_cli_args @99d7eb5d; "
                    "https://github.com/vllm-project/vllm/pull/52781 (deepep_v2)"},
    .cuda_graph_rule = {"as 0.11: capture sizes up to min(2 x max_num_seqs, 512), graph mode the minimum over DP "
                        "ranks",
                        "vllm/config/compilation.py: max_cudagraph_capture_size @ee525ce4; "
                        "vllm/v1/worker/dp_utils.py: coordinate_batch_across_dp @00746147"},
    .dp_padding_rule = {"as 0.11: every DP rank runs the largest padded token count when graphs or DBO are on",
                        "vllm/v1/worker/dp_utils.py: _synchronize_dp_ranks @00746147"},
    .kv_admission = KvAdmission::preempt,
    .kv_admission_rule = {"as 0.11: admit on the prompt's blocks, preempt by recompute",
                          "vllm/v1/core/sched/scheduler.py: Scheduler.schedule @b4622cf9"},
    .moe_dp_chunk_tokens = 256,
    .moe_chunk_rule = {"as 0.11: a dispatch, the experts and a combine per VLLM_MOE_DP_CHUNK_SIZE (256) tokens of the "
                       "largest DP rank",
                       "vllm/model_executor/layers/fused_moe/layer.py: FusedMoE.forward_impl_chunked @c439a139"},
    .dbo_ht_waits_compute_tail = false,
    .dbo_ht_event_rule = {"as 0.11 until the event was captured before the yield: a DBO collective waits only for its "
                          "own micro-batch's compute",
                          "https://github.com/vllm-project/vllm/pull/38451 (merged 2026-03)"},
  },
  {
    .name = "sglang", .version = "0.5", .label = "SGLang", .is_default = true,
    .decode_schedule = sim::ScheduleId::sglang_tbo, .prefill_schedule = sim::ScheduleId::sglang_tbo,
    .launch = LaunchFamily::sglang_launch_server, .launch_text = "python -m sglang.launch_server",
    .deepep_flag = "--moe-a2a-backend deepep", .async_combine_backend = "",
    .schedule_rule = {"two-batch overlap (--enable-two-batch-overlap) splits every batch in two: decode in "
                      "DeepSeek's decode order, prefill stage by stage",
                      "https://lmsys.org/blog/2025-05-05-large-scale-ep/ (lm-sys/lm-sys.github.io "
                      "blog/2025-05-05-large-scale-ep.md @2db4e40, 'Two-batch Overlap')"},
    .launch_rule = {"--tp, --dp, --enable-dp-attention, --moe-a2a-backend deepep (--enable-deepep-moe is "
                    "deprecated), --deepep-mode auto|normal|low_latency, --enable-two-batch-overlap",
                    "https://docs.sglang.io/advanced_features/server_arguments.html; "
                    "https://docs.sglang.io/advanced_features/expert_parallelism.html"},
    .cuda_graph_rule = {"decode batches up to --cuda-graph-max-bs replay a CUDA graph; larger ones and prefill run "
                        "eagerly",
                        "docs/engines-evidence.md A2; https://docs.sglang.io/advanced_features/server_arguments.html"},
    .dp_padding_rule = {"DeepEP low-latency buffer per rank set by SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK; "
                        "no MoE DP chunk loop",
                        "docs/engines-evidence.md A2; https://github.com/sgl-project/sglang/issues/23896"},
    .kv_admission = KvAdmission::preempt,
    .kv_admission_rule = {"admits against an estimate of the running requests' future tokens (new_token_ratio) and "
                          "retracts decoding requests when the KV pool runs out: preempt, as dbosim prices it",
                          "python/sglang/srt/managers/schedule_policy.py: PrefillAdder @ad0119fd; "
                          "python/sglang/srt/managers/scheduler.py: update_running_batch (retract_decode)"},
    .moe_dp_chunk_tokens = 0,
    .moe_chunk_rule = {"no MoE DP chunk loop: one dispatch and combine per layer (the low-latency buffer is sized by "
                       "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK instead)",
                       "docs/engines-evidence.md A2; https://github.com/sgl-project/sglang/issues/23896"},
    .dbo_ht_waits_compute_tail = false,
    .dbo_ht_event_rule = {"SGLang's two-batch overlap queues the other micro-batch's compute before the CPU-blocking "
                          "dispatch and each collective waits for its own micro-batch's data (schedule sglang_tbo)",
                          "LMSYS blog 2025-05-05 large-scale-ep, 'Prefill Overlapping Implementation' "
                          "(lm-sys/lm-sys.github.io @2db4e40)"},
  },
  {
    .name = "sglang", .version = "2025-05", .label = "SGLang", .is_default = false,
    .decode_schedule = sim::ScheduleId::sglang_tbo, .prefill_schedule = sim::ScheduleId::sglang_tbo,
    .launch = LaunchFamily::sglang_launch_server, .launch_text = "python -m sglang.launch_server",
    .deepep_flag = "--enable-deepep-moe", .async_combine_backend = "",
    .schedule_rule = {"two-batch overlap (--enable-two-batch-overlap) splits every batch in two: decode in "
                      "DeepSeek's decode order, prefill stage by stage",
                      "https://lmsys.org/blog/2025-05-05-large-scale-ep/ (lm-sys/lm-sys.github.io "
                      "blog/2025-05-05-large-scale-ep.md @2db4e40, 'Two-batch Overlap')"},
    .launch_rule = {"the May 2025 builds select DeepEP with --enable-deepep-moe (later deprecated for "
                    "--moe-a2a-backend deepep)",
                    "sgl-project/sglang docs/backend/pd_disaggregation.md @01a4a975 (DeepSeek multi-node commands)"},
    .cuda_graph_rule = {"decode batches up to --cuda-graph-max-bs replay a CUDA graph; larger ones and prefill run "
                        "eagerly",
                        "docs/engines-evidence.md A2; https://docs.sglang.io/advanced_features/server_arguments.html"},
    .dp_padding_rule = {"DeepEP low-latency buffer per rank set by SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK; "
                        "no MoE DP chunk loop",
                        "docs/engines-evidence.md A2; https://github.com/sgl-project/sglang/issues/23896"},
    .kv_admission = KvAdmission::preempt,
    .kv_admission_rule = {"as 0.5: admit against the future-token estimate, retract decoding requests (preempt)",
                          "python/sglang/srt/managers/schedule_policy.py: PrefillAdder @ad0119fd"},
    .moe_dp_chunk_tokens = 0,
    .moe_chunk_rule = {"as 0.5: no MoE DP chunk loop", "docs/engines-evidence.md A2"},
    .dbo_ht_waits_compute_tail = false,
    .dbo_ht_event_rule = {"as 0.5", "LMSYS blog 2025-05-05 large-scale-ep (lm-sys/lm-sys.github.io @2db4e40)"},
  },
  {
    .name = "trtllm", .version = "1.0", .label = "TensorRT-LLM", .is_default = true,
    .decode_schedule = sim::ScheduleId::serial, .prefill_schedule = sim::ScheduleId::serial,
    .launch = LaunchFamily::trtllm_serve, .launch_text = "trtllm-serve", .deepep_flag = "", .async_combine_backend = "",
    .schedule_rule = {"no two-micro-batch overlap of dispatch and combine in the published DeepSeek-R1 recipes: "
                      "each layer's ops in order",
                      "docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md @01c4ece9"},
    .launch_rule = {"trtllm-serve MODEL --tp_size --ep_size; attention DP (enable_attention_dp) through the YAML "
                    "given to --extra_llm_api_options",
                    "https://nvidia.github.io/TensorRT-LLM/1.0.0rc6/commands/trtllm-serve/trtllm-serve.html; "
                    "https://nvidia.github.io/TensorRT-LLM/0.20.0/examples/deepseek_r1_reasoning_parser.html"},
    .cuda_graph_rule = {"a CUDA graph only for generation-only batches of a captured size; with attention DP only "
                        "when every rank is generation-only and all batch sizes are equal, else eager",
                        "tensorrt_llm/_torch/pyexecutor/model_engine.py: PyTorchModelEngine._maybe_get_cuda_graph "
                        "@1a0dc5f7"},
    .dp_padding_rule = {"attention DP ranks all-gather (can-graph, batch size) every iteration; an iteration lasts "
                        "as long as its busiest rank (a context chunk on one rank slows all)",
                        "docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md @011cfc2c"},
    .kv_admission = KvAdmission::reserve,
    .kv_admission_rule = {"capacity scheduler GUARANTEED_NO_EVICT (the default): a request starts only when its KV "
                          "up to the last output token fits, and a started request is never paused",
                          "docs/source/performance/performance-tuning-guide/useful-runtime-flags.md, 'Capacity "
                          "Scheduler Policy' (https://nvidia.github.io/TensorRT-LLM/performance/"
                          "performance-tuning-guide/useful-runtime-flags.html)"},
    .moe_dp_chunk_tokens = 0,
    .moe_chunk_rule = {"one all-gather and reduce-scatter per MoE layer, bounded by max_num_tokens; no DP chunk loop",
                       "docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md @01c4ece9"},
    .dbo_ht_waits_compute_tail = false,
    .dbo_ht_event_rule = {"no DBO", "docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md @01c4ece9"},
  },
  {
    .name = "deepseek", .version = "2025-02", .label = "DeepSeek's inference system", .is_default = true,
    .decode_schedule = sim::ScheduleId::deepseek_decode, .prefill_schedule = sim::ScheduleId::deepseek_prefill,
    .launch = LaunchFamily::none, .launch_text = "", .deepep_flag = "", .async_combine_backend = "",
    .schedule_rule = {"dual micro-batch overlap: decode in a five-stage pipeline around dispatch and combine, "
                      "prefill attention and MLP under the other micro-batch's communication",
                      "deepseek-ai/open-infra-index 202502OpenSourceWeek/"
                      "day_6_one_more_thing_deepseekV3R1_inference_system_overview.md @56d8685; "
                      "https://github.com/deepseek-ai/profile-data"},
    .launch_rule = {"in-house system, no public launch command",
                    "deepseek-ai/open-infra-index 202502OpenSourceWeek/"
                    "day_6_one_more_thing_deepseekV3R1_inference_system_overview.md @56d8685"},
    .cuda_graph_rule = {"not published", "https://github.com/deepseek-ai/profile-data"},
    .dp_padding_rule = {"not published; the profiled steps balance the routing",
                        "https://github.com/deepseek-ai/profile-data"},
    .kv_admission = KvAdmission::preempt,
    .kv_admission_rule = {"not published; dbosim's scheduler (vLLM's) admits on the prompt's blocks",
                          "https://github.com/deepseek-ai/profile-data"},
    .moe_dp_chunk_tokens = 0,
    .moe_chunk_rule = {"not published; the profiled steps run one dispatch and combine per layer and micro-batch",
                       "https://github.com/deepseek-ai/profile-data"},
    .dbo_ht_waits_compute_tail = false,
    .dbo_ht_event_rule = {"not published; the profiled steps' collectives wait for their own micro-batch",
                          "https://github.com/deepseek-ai/profile-data"},
  },
};
// clang-format on

/** @brief `name@version`. */
inline std::string engine_id(const ServingEngine& e) { return std::string(e.name) + "@" + e.version; }

/** @brief The row `engine:` names (a bare name: its default row), or null. */
inline const ServingEngine* find_engine(std::string_view spec)
{
  const std::size_t at           = spec.find('@');
  const std::string_view name    = spec.substr(0, at);
  const std::string_view version = at == std::string_view::npos ? std::string_view{} : spec.substr(at + 1);
  for (const ServingEngine& e : serving_engines)
    if (name == e.name && (at == std::string_view::npos ? e.is_default : version == e.version))
      return &e;
  return nullptr;
}

/** @brief The row a scenario without `engine:` runs. */
inline const ServingEngine& default_engine() { return *find_engine("vllm"); }

/** @brief The row a scenario's `engine` points at; null: the default row. */
inline const ServingEngine& engine_row(const ServingEngine* e) { return e ? *e : default_engine(); }

/** @brief The KV admission a scenario runs: its own, or under `auto` its engine row's. */
inline KvAdmission resolved_kv_admission(KvAdmission set, const ServingEngine* e)
{
  return set == KvAdmission::engine_default ? engine_row(e).kv_admission : set;
}

/** @brief The default overlap.schedule of a step of `e` (`prefill` or decode). */
inline sim::ScheduleId engine_schedule(const ServingEngine& e, bool prefill)
{
  return prefill ? e.prefill_schedule : e.decode_schedule;
}

/** @brief Every valid `engine:` value, each bare name followed by its pinned rows: vllm, vllm@0.11, ... */
inline std::vector<std::string> engine_values()
{
  std::vector<std::string> out;
  for (const ServingEngine& e : serving_engines) {
    if (!e.is_default)
      continue;
    out.emplace_back(e.name);
    for (const ServingEngine& v : serving_engines)
      if (std::string_view(v.name) == e.name)
        out.push_back(engine_id(v));
  }
  return out;
}

constexpr bool engine_text(const char* s) { return s && *s; }

/** @brief Every row names its version, label, schedules, KV admission and rules with sources; each name has one
 *  default row, and a row with a launch family spells how it starts. */
constexpr bool engine_rows_complete()
{
  for (const ServingEngine& e : serving_engines) {
    if (!engine_text(e.name) || !engine_text(e.version) || !engine_text(e.label) || !e.deepep_flag ||
        !e.async_combine_backend)
      return false;
    if (e.launch != LaunchFamily::none && !engine_text(e.launch_text))
      return false;
    if (e.kv_admission == KvAdmission::engine_default)
      return false;
    for (const NamedRule& r : engine_rules)
      if (!engine_text((e.*r.rule).rule) || !engine_text((e.*r.rule).source))
        return false;
    int defaults = 0;
    for (const ServingEngine& v : serving_engines)
      defaults += std::string_view(v.name) == e.name && v.is_default;
    if (defaults != 1)
      return false;
  }
  return true;
}
static_assert(engine_rows_complete(), "config/EngineTable.hpp: a row is incomplete or a name has no single default");

} // namespace dbosim

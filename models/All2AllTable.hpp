/* dbosim — the all-to-all backends, one row each, with their traits. Every decision that depends on the backend
 * (SMs held, the comm SM partition, recv hooks, the experts' input layout, the rules of DBO and async combine, the
 * vLLM flag, the kernels launched and the cost model) reads a trait of this table, never the backend's name. The row
 * also names its cost model: models/All2AllModel.cpp binds it to its function there. Header-only and free of engine
 * types, so that the scenario reader (config) and the CLI list the same rows. Adding a backend: its name and cost
 * model in DBOSIM_ALL2ALL_BACKENDS, its row in all2all_traits, and its model function (docs/all2all_backends.md).
 * Each row names every field (designated initializers); a yes/no trait has no default (All2AllFlag), so a row that
 * leaves one out does not compile, and all2all_table_is_complete() checks the rest. */
#pragma once
#include "hw/Platform.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

/** X(NAME, MODEL): the enum value and the scenario's overlap.all2all_backend value, and its cost model, a function of
 *  models/All2AllModel.cpp. The traits of each are its row of all2all_traits, in the same order. */
#define DBOSIM_ALL2ALL_BACKENDS(X)                                                                                     \
  X(deepep_high_throughput, deepep_ht)                                                                                 \
  X(deepep_low_latency, deepep_ll)                                                                                     \
  X(deepep_v2, deepep_ht)                                                                                              \
  X(nccl, nccl_agrs)                                                                                                   \
  X(mori, mori_ep)

namespace dbosim::models {

#define DBOSIM_ALL2ALL_ENUM_ROW(name, model) name,
/** @brief The all-to-all backends, in the table's order. */
enum class All2AllBackend { DBOSIM_ALL2ALL_BACKENDS(DBOSIM_ALL2ALL_ENUM_ROW) };
#undef DBOSIM_ALL2ALL_ENUM_ROW

#define DBOSIM_ALL2ALL_NAME_ROW(name, model) #name,
/** @brief The backends' names and cost models, in the enum's order. */
inline constexpr const char* all2all_backend_names[] = {DBOSIM_ALL2ALL_BACKENDS(DBOSIM_ALL2ALL_NAME_ROW)};
#undef DBOSIM_ALL2ALL_NAME_ROW
#define DBOSIM_ALL2ALL_MODEL_ROW(name, model) #model,
inline constexpr const char* all2all_model_names[] = {DBOSIM_ALL2ALL_BACKENDS(DBOSIM_ALL2ALL_MODEL_ROW)};
#undef DBOSIM_ALL2ALL_MODEL_ROW

/** @brief A yes/no trait every row must state: it has no default, so a row that leaves it out does not compile. */
struct All2AllFlag {
  bool on;
  constexpr All2AllFlag(bool b) : on(b) {} // NOLINT(google-explicit-constructor): rows write true / false
  constexpr operator bool() const { return on; }
};

/** @brief The serving stack a backend runs on: one platform, or any. It has no default, so a row that leaves it out
 *  does not compile. */
struct All2AllPlatform {
  std::optional<Platform> only;                      ///< nullopt: any
  constexpr All2AllPlatform(Platform p) : only(p) {} // NOLINT(google-explicit-constructor): rows write Platform::rocm
  constexpr explicit All2AllPlatform(std::nullopt_t) : only() {}
};
/** @brief A backend that runs on every platform. */
inline constexpr All2AllPlatform any_platform{std::nullopt};

/** @brief The kernels one collective (D or C) launches and where vLLM launches them. */
struct All2AllLaunches {
  int count;          ///< kernel launches (each costs the host one launch)
  const char* what;   ///< the kernels
  const char* source; ///< the vLLM file (and function) that launches them
};

/** @brief A backend's traits, without its cost model's function. */
struct All2AllTraits {
  const char* name;       ///< the enum value's name: the scenario's overlap.all2all_backend value
  const char* doc;        ///< one line for `dbosim backends`
  All2AllBackend backend; ///< its enum value (row i is backend i)
  All2AllFlag holds_sms;  ///< its comm kernels are SM-resident while in flight (compute shares the GPU with them)
  /** under DBO its kernels run on overlap.dbo_comm_sms SMs (VLLM_DBO_COMM_SMS), a partition */
  All2AllFlag honours_dbo_comm_sms;
  All2AllFlag whole_sm_ctas; ///< a comm CTA fills its SM (shared memory): no compute CTA beside it
  /** under DBO, D and C are a send kernel, data in flight with no SMs, then a recv hook (DeepEP low-latency's
   *  return_recv_hook): the StepPlan lists D_recv/C_recv */
  All2AllFlag has_recv_hook;
  /** it hands the experts a masked [experts, max tokens, hidden] buffer (no permute/unpermute) */
  All2AllFlag masked_expert_input;
  /** the engine quantizes the activations before the dispatch, so it moves the model's dtypes.dispatch; off: the
   *  collective moves the activations as the layer holds them (BF16) and the experts quantize after it, unless
   *  precision.dispatch_dtype names a payload */
  All2AllFlag quantized_dispatch;
  All2AllFlag dbo;           ///< dbosim accepts it under DBO (vLLM's micro-batching needs DeepEP's split send/recv)
  All2AllFlag async_combine; ///< it has finalize_async: overlap.async_combine is allowed
  /** vLLM adds the fused-MoE custom ops (moe_forward, moe_forward_shared) to the splitting ops of its piecewise CUDA
   *  graphs for it, so that its dispatch and combine stay outside the graphs (CompilationConfig.
   *  set_splitting_ops_for_v1, vllm/config/compilation.py, for deepep_high_throughput; docs/piecewise-graphs.md) */
  All2AllFlag piecewise_splits_moe;
  const char* vllm_name;      ///< vLLM's --all2all-backend value (vllm/config/parallel.py)
  All2AllFlag vllm_ubatching; ///< vLLM's micro-batching asks for it (vllm/config/vllm.py); else the launch warns
  All2AllLaunches dispatch;   ///< the kernels of one dispatch
  All2AllLaunches combine;    ///< the kernels of one combine
  /** the only serving stack it runs on, or any_platform; a scenario on a profile of another platform
   *  (hwprofiles/<gpu>.yaml platform.stack) is refused */
  All2AllPlatform platform;
  /** @brief Its cost model's function in models/All2AllModel.cpp (DBOSIM_ALL2ALL_BACKENDS). */
  constexpr const char* model() const { return all2all_model_names[std::size_t(backend)]; }
};

/** @brief Every backend's traits, in the enum's order. */
inline constexpr All2AllTraits all2all_traits[] = {
    {.name                 = "deepep_high_throughput",
     .doc                  = "DeepEP normal: chunked NVLink inside a node; RDMA to the same-rail GPU then NVLink "
                             "forwarding; SM-bounded",
     .backend              = All2AllBackend::deepep_high_throughput,
     .holds_sms            = true,
     .honours_dbo_comm_sms = true,
     .whole_sm_ctas        = true,
     .has_recv_hook        = false,
     .masked_expert_input  = false,
     .quantized_dispatch   = true,
     .dbo                  = true,
     .async_combine        = true,
     .piecewise_splits_moe = true,
     .vllm_name            = "deepep_high_throughput",
     .vllm_ubatching       = true,
     .dispatch             = {2, "DeepEP get_dispatch_layout + dispatch",
                              "vllm/model_executor/layers/fused_moe/deepep_ht_prepare_finalize.py: prepare"},
     .combine  = {1, "DeepEP combine", "vllm/model_executor/layers/fused_moe/deepep_ht_prepare_finalize.py: finalize"},
     .platform = any_platform},
    {.name                 = "deepep_low_latency",
     .doc                  = "DeepEP low-latency: per-copy IBGDA RDMA, NVLink inside a node, no SMs held",
     .backend              = All2AllBackend::deepep_low_latency,
     .holds_sms            = false,
     .honours_dbo_comm_sms = false,
     .whole_sm_ctas        = false,
     .has_recv_hook        = true,
     .masked_expert_input  = true,
     .quantized_dispatch   = true,
     .dbo                  = true,
     .async_combine        = true,
     .piecewise_splits_moe = false,
     .vllm_name            = "deepep_low_latency",
     .vllm_ubatching       = true,
     .dispatch             = {2, "DeepEP low_latency_dispatch: send kernel (FP8 cast fused) + recv hook",
                              "vllm/model_executor/layers/fused_moe/deepep_ll_prepare_finalize.py: prepare"},
     .combine              = {2, "DeepEP low_latency_combine: send kernel + recv hook with the top-k weighted reduce",
                              "vllm/model_executor/layers/fused_moe/deepep_ll_prepare_finalize.py: finalize"},
     .platform             = any_platform},
    {.name                 = "deepep_v2",
     .doc                  = "DeepEP v2 (ElasticBuffer): the high-throughput data path (no separate v2 facts yet)",
     .backend              = All2AllBackend::deepep_v2,
     .holds_sms            = true,
     .honours_dbo_comm_sms = false,
     .whole_sm_ctas        = false,
     .has_recv_hook        = false,
     .masked_expert_input  = false,
     .quantized_dispatch   = true,
     .dbo                  = true,
     .async_combine        = true,
     .piecewise_splits_moe = false,
     .vllm_name            = "deepep_v2",
     .vllm_ubatching       = false,
     .dispatch             = {2, "DeepEP v2 ElasticBuffer layout + dispatch",
                              "vllm/model_executor/layers/fused_moe/prepare_finalize/deepep_v2.py: prepare"},
     .combine              = {1, "DeepEP v2 ElasticBuffer combine",
                              "vllm/model_executor/layers/fused_moe/prepare_finalize/deepep_v2.py: finalize / "
                                           "finalize_async"},
     .platform             = Platform::cuda},
    {.name                 = "nccl",
     .doc                  = "NCCL all-gather of every rank's tokens before the experts, reduce-scatter of their "
                             "partial sums after (vLLM allgather_reducescatter; TensorRT-LLM attention DP in a node)",
     .backend              = All2AllBackend::nccl,
     .holds_sms            = true,
     .honours_dbo_comm_sms = false,
     .whole_sm_ctas        = false,
     .has_recv_hook        = false,
     .masked_expert_input  = false,
     .quantized_dispatch   = false,
     .dbo                  = false,
     .async_combine        = false,
     .piecewise_splits_moe = false,
     .vllm_name            = "allgather_reducescatter",
     .vllm_ubatching       = false,
     .dispatch             = {1, "NCCL all-gather of the hidden states with the top-k ids and weights",
                              "vllm/distributed/device_communicators/all2all.py: AgRsAll2AllManager.dispatch "
                                          "(all_gatherv)"},
     .combine              = {1, "NCCL reduce-scatter of the experts' partial sums",
                              "vllm/distributed/device_communicators/all2all.py: AgRsAll2AllManager.combine "
                                           "(reduce_scatterv)"},
     .platform             = any_platform},
    {.name                 = "mori",
     .doc                  = "MoRI-EP (ROCm): IntraNode push kernels over the xGMI mesh, one copy per (token, rank); "
                             "InterNodeV1 across nodes",
     .backend              = All2AllBackend::mori,
     .holds_sms            = true,
     .honours_dbo_comm_sms = false,
     .whole_sm_ctas        = false,
     .has_recv_hook        = false,
     .masked_expert_input  = false,
     .quantized_dispatch   = true,
     .dbo                  = false,
     .async_combine        = false,
     .piecewise_splits_moe = false,
     .vllm_name            = "mori_high_throughput",
     .vllm_ubatching       = false,
     .dispatch             = {1, "MoRI EpDispatchIntraNodeKernel (aiter's FP8 quant runs before it)",
                              "vllm/model_executor/layers/fused_moe/prepare_finalize/mori.py: prepare"},
     .combine              = {1, "MoRI EpCombineIntraNodeKernel (push, barrier, top-k sum)",
                              "vllm/model_executor/layers/fused_moe/prepare_finalize/mori.py: finalize"},
     .platform             = Platform::rocm},
};

/** @brief The row of `b`. */
constexpr const All2AllTraits& all2all_traits_of(All2AllBackend b) { return all2all_traits[std::size_t(b)]; }

/** @brief The rows' names joined by ", ", those with `keep(row)` only. */
template <class Keep> std::string all2all_names_where(Keep keep)
{
  std::string names;
  for (const All2AllTraits& t : all2all_traits)
    if (keep(t))
      names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}
/** @brief Whether backend `t` runs on the serving stack `stack`. */
constexpr bool all2all_runs_on(const All2AllTraits& t, Platform stack)
{
  return !t.platform.only || *t.platform.only == stack;
}
/** @brief "cuda" or "rocm" for a backend of one platform, else "any". */
constexpr const char* all2all_platform_name(const All2AllTraits& t)
{
  return t.platform.only ? platform_name(*t.platform.only) : "any";
}
/** @brief Every backend's name, joined by ", ". */
inline std::string all2all_names()
{
  return all2all_names_where([](const All2AllTraits&) { return true; });
}

/** @brief One row per backend, row i is backend i under its enum name, and every row says what it launches (a count
 *  of at least one, the kernels and the vLLM file). A yes/no trait left out does not compile (All2AllFlag). */
constexpr bool all2all_table_is_complete()
{
  if (std::size(all2all_traits) != std::size(all2all_backend_names))
    return false;
  std::size_t i = 0;
  for (const All2AllTraits& t : all2all_traits) {
    if (std::size_t(t.backend) != i || !t.name || std::string_view(t.name) != all2all_backend_names[i] || !t.doc ||
        !*t.doc || !t.vllm_name || !*t.vllm_name || !*t.model())
      return false;
    ++i;
    for (const All2AllLaunches& l : {t.dispatch, t.combine})
      if (l.count < 1 || !l.what || !*l.what || !l.source || std::string_view(l.source).substr(0, 5) != "vllm/")
        return false;
    if (t.honours_dbo_comm_sms && !t.holds_sms) // a partition of SMs for kernels that hold none
      return false;
    if (t.whole_sm_ctas && !t.holds_sms)
      return false;
  }
  return i > 0;
}
static_assert(all2all_table_is_complete(), "models/All2AllTable.hpp: a row is incomplete (see the fields)");

} // namespace dbosim::models

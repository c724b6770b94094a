/* dbosim — the all-to-all backends, one row each, with their traits. Every decision that depends on the backend
 * (SMs held, the comm SM partition, recv hooks, the experts' input layout, the rules of DBO and async combine, the
 * vLLM flag, the kernels launched and the cost model) reads a trait of this table, never the backend's name. The row
 * also names its cost model: models/All2AllModel.cpp binds `MODEL` to its function there. Header-only and free of
 * engine types, so that the scenario reader (config) and the CLI list the same rows. Adding a backend: one row here
 * and its model function (docs/all2all_backends.md). The columns, in order:
 *
 *   NAME            the enum value and the scenario's overlap.all2all_backend value
 *   DOC             one line for `dbosim backends`
 *   HOLDS_SMS       its comm kernels are SM-resident while in flight (compute shares the GPU with them)
 *   HONOURS_SMS     under DBO its kernels run on overlap.dbo_comm_sms SMs (VLLM_DBO_COMM_SMS), a partition
 *   WHOLE_SMS       a comm CTA fills its SM (shared memory): no compute CTA beside it
 *   RECV_HOOK       under DBO, D and C are a send kernel, data in flight with no SMs, then a recv hook
 *                   (DeepEP low-latency's return_recv_hook): the StepPlan lists D_recv/C_recv
 *   MASKED          it hands the experts a masked [experts, max tokens, hidden] buffer (no permute/unpermute)
 *   DBO             dbosim accepts it under DBO (vLLM's micro-batching needs DeepEP's split send/recv)
 *   ASYNC_COMBINE   it has finalize_async: overlap.async_combine is allowed
 *   PIECEWISE_MOE   vLLM adds the fused-MoE custom ops (moe_forward, moe_forward_shared) to the splitting ops of its
 *                   piecewise CUDA graphs for it, so that its dispatch and combine stay outside the graphs
 *                   (CompilationConfig.set_splitting_ops_for_v1, vllm/config/compilation.py, for
 *                   deepep_high_throughput; docs/piecewise-graphs.md)
 *   VLLM_NAME       vLLM's --all2all-backend value (vllm/config/parallel.py)
 *   VLLM_UBATCH     vLLM's micro-batching asks for it (vllm/config/vllm.py); else the launch command warns
 *   MODEL           its cost model: a function of models/All2AllModel.cpp
 *   D_LAUNCHES      kernel launches per dispatch; D_KERNELS: which; D_SOURCE: where vLLM launches them
 *   C_LAUNCHES      the same for combine: C_KERNELS, C_SOURCE
 *   PLATFORM        the serving stack it runs on: "cuda", "rocm" or "any"; a scenario on a profile of another
 *                   platform (hwprofiles/<gpu>.yaml platform.stack) is refused */
#pragma once

// clang-format off
#define DBOSIM_ALL2ALL_TABLE(X)                                                                                       \
  X(deepep_high_throughput,                                                                                           \
    "DeepEP normal: chunked NVLink inside a node; RDMA to the same-rail GPU then NVLink forwarding; SM-bounded",      \
    /* HOLDS_SMS HONOURS_SMS WHOLE_SMS RECV_HOOK MASKED DBO ASYNC_COMBINE PIECEWISE_MOE */                            \
    true, true, true, false, false, true, true, true,                                                                \
    "deepep_high_throughput", true, deepep_ht,                                                                        \
    2, "DeepEP get_dispatch_layout + dispatch",                                                                       \
    "vllm/model_executor/layers/fused_moe/deepep_ht_prepare_finalize.py: prepare",                                    \
    1, "DeepEP combine",                                                                                              \
    "vllm/model_executor/layers/fused_moe/deepep_ht_prepare_finalize.py: finalize", "any")                            \
  X(deepep_low_latency,                                                                                               \
    "DeepEP low-latency: per-copy IBGDA RDMA, NVLink inside a node, no SMs held",                                     \
    /* HOLDS_SMS HONOURS_SMS WHOLE_SMS RECV_HOOK MASKED DBO ASYNC_COMBINE PIECEWISE_MOE */                            \
    false, false, false, true, true, true, true, false,                                                              \
    "deepep_low_latency", true, deepep_ll,                                                                            \
    2, "DeepEP low_latency_dispatch: send kernel (FP8 cast fused) + recv hook",                                       \
    "vllm/model_executor/layers/fused_moe/deepep_ll_prepare_finalize.py: prepare",                                    \
    2, "DeepEP low_latency_combine: send kernel + recv hook with the top-k weighted reduce",                          \
    "vllm/model_executor/layers/fused_moe/deepep_ll_prepare_finalize.py: finalize", "any")                            \
  X(deepep_v2,                                                                                                        \
    "DeepEP v2 (ElasticBuffer): the high-throughput data path (no separate v2 facts yet)",                            \
    /* HOLDS_SMS HONOURS_SMS WHOLE_SMS RECV_HOOK MASKED DBO ASYNC_COMBINE PIECEWISE_MOE */                            \
    true, false, false, false, false, true, true, false,                                                             \
    "deepep_v2", false, deepep_ht,                                                                                    \
    2, "DeepEP v2 ElasticBuffer layout + dispatch",                                                                   \
    "vllm/model_executor/layers/fused_moe/prepare_finalize/deepep_v2.py: prepare",                                    \
    1, "DeepEP v2 ElasticBuffer combine",                                                                             \
    "vllm/model_executor/layers/fused_moe/prepare_finalize/deepep_v2.py: finalize / finalize_async", "cuda")          \
  X(nccl,                                                                                                             \
    "NCCL all-to-all: per-peer send/recv, per-message efficiency, channels in flight",                                \
    /* HOLDS_SMS HONOURS_SMS WHOLE_SMS RECV_HOOK MASKED DBO ASYNC_COMBINE PIECEWISE_MOE */                            \
    true, false, false, false, false, false, false, false,                                                           \
    "allgather_reducescatter", false, nccl_a2a,                                                                       \
    1, "ncclAllToAll-style send/recv", "vllm/distributed/device_communicators/all2all.py",                            \
    1, "ncclAllToAll-style send/recv", "vllm/distributed/device_communicators/all2all.py", "any")                     \
  X(mori,                                                                                                             \
    "MoRI-EP (ROCm): IntraNode push kernels over the xGMI mesh, one copy per (token, rank); InterNodeV1 across nodes", \
    /* HOLDS_SMS HONOURS_SMS WHOLE_SMS RECV_HOOK MASKED DBO ASYNC_COMBINE PIECEWISE_MOE */                            \
    true, false, false, false, false, false, false, false,                                                           \
    "mori_high_throughput", false, mori_ep,                                                                           \
    1, "MoRI EpDispatchIntraNodeKernel (aiter's FP8 quant runs before it)",                                           \
    "vllm/model_executor/layers/fused_moe/prepare_finalize/mori.py: prepare",                                         \
    1, "MoRI EpCombineIntraNodeKernel (push, barrier, top-k sum)",                                                    \
    "vllm/model_executor/layers/fused_moe/prepare_finalize/mori.py: finalize", "rocm")
// clang-format on

#include <cstddef>
#include <string>
#include <string_view>

namespace dbosim::models {

#define DBOSIM_ALL2ALL_ENUM_ROW(name, ...) name,
/** @brief The all-to-all backends, in the table's order. */
enum class All2AllBackend { DBOSIM_ALL2ALL_TABLE(DBOSIM_ALL2ALL_ENUM_ROW) };
#undef DBOSIM_ALL2ALL_ENUM_ROW

/** @brief The kernels one collective (D or C) launches and where vLLM launches them. */
struct All2AllLaunches {
  int count;          ///< kernel launches (each costs the host one launch)
  const char* what;   ///< the kernels
  const char* source; ///< the vLLM file (and function) that launches them
};

/** @brief A backend's traits, without its cost model's function (see the table's columns). */
struct All2AllTraits {
  const char* name;
  const char* doc;
  All2AllBackend backend;
  bool holds_sms;
  bool honours_dbo_comm_sms;
  bool whole_sm_ctas;
  bool has_recv_hook;
  bool masked_expert_input;
  bool dbo;
  bool async_combine;
  bool piecewise_splits_moe;
  const char* vllm_name;
  bool vllm_ubatching;
  const char* model; ///< the cost model's function in models/All2AllModel.cpp
  All2AllLaunches dispatch;
  All2AllLaunches combine;
  const char* platform; ///< "cuda", "rocm" or "any"
};

// clang-format off
#define DBOSIM_ALL2ALL_TRAITS_ROW(name, doc, holds, honours, whole, hook, masked, dbo, async, pwmoe, vllm, ubatch,     \
                                  model, dn, dk, ds, cn, ck, cs, platform)                                             \
  All2AllTraits{#name, doc, All2AllBackend::name, holds, honours, whole, hook, masked, dbo, async, pwmoe, vllm,        \
                ubatch, #model, {dn, dk, ds}, {cn, ck, cs}, platform},
// clang-format on
/** @brief Every backend's traits, in the table's (and the enum's) order. */
inline constexpr All2AllTraits all2all_traits[] = {DBOSIM_ALL2ALL_TABLE(DBOSIM_ALL2ALL_TRAITS_ROW)};
#undef DBOSIM_ALL2ALL_TRAITS_ROW

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
/** @brief Whether backend `t` runs on the serving stack `stack` ("cuda" or "rocm"). */
inline bool all2all_runs_on(const All2AllTraits& t, std::string_view stack)
{
  return std::string_view(t.platform) == "any" || std::string_view(t.platform) == stack;
}
/** @brief Every backend's name, joined by ", ". */
inline std::string all2all_names()
{
  return all2all_names_where([](const All2AllTraits&) { return true; });
}

/** @brief Row i is backend i, and every row says what it launches (a count of at least one, the kernels and the vLLM
 *  file). A row with a column missing does not expand (the table macro's arity). */
constexpr bool all2all_table_is_complete()
{
  std::size_t i = 0;
  for (const All2AllTraits& t : all2all_traits) {
    if (std::size_t(t.backend) != i++ || !t.name || !*t.name || !t.doc || !*t.doc || !t.vllm_name || !*t.vllm_name ||
        !t.model || !*t.model)
      return false;
    for (const All2AllLaunches& l : {t.dispatch, t.combine})
      if (l.count < 1 || !l.what || !*l.what || !l.source || std::string_view(l.source).substr(0, 5) != "vllm/")
        return false;
    if (t.honours_dbo_comm_sms && !t.holds_sms) // a partition of SMs for kernels that hold none
      return false;
    if (t.whole_sm_ctas && !t.holds_sms)
      return false;
    if (!t.platform || (std::string_view(t.platform) != "cuda" && std::string_view(t.platform) != "rocm" &&
                        std::string_view(t.platform) != "any"))
      return false;
  }
  return i > 0;
}
static_assert(all2all_table_is_complete(), "models/All2AllTable.hpp: a row is incomplete (see the columns)");

} // namespace dbosim::models

/* dbosim — cost of each op of one decoder layer (docs/domain.md §1): FLOPs, bytes and duration from the profile.
 * Pure functions: no SimGrid, no I/O. */
#pragma once
#include "hw/HwProfile.hpp"
#include "models/All2AllTable.hpp"
#include "models/CommSetup.hpp"
#include "models/ModelSpec.hpp"

#include <compare>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace dbosim::models {

/** @brief Ops of one layer, DeepSeek naming. Dense layers use MLP for their dense FFN and have no D/C.
 *  D_recv and C_recv are the receive halves of D and C when they run as a recv hook (DeepEP low-latency with
 *  return_recv_hook under DBO): the engine's ops only; a layer's costs never list them. */
enum class OpKind { A0, A1, D, MLP, S, C, D_recv, C_recv };
std::string op_name(OpKind k);

/** @brief The vLLM custom op a kernel runs inside, when that op can be a splitting op of vLLM's piecewise CUDA
 *  graphs (CompilationConfig.splitting_ops, vllm/config/compilation.py): under `cuda_graph: piecewise` the kernels
 *  of a splitting op run eagerly between the captured pieces. `attention`: the attention custom op
 *  (unified_attention_with_output / unified_mla_attention_with_output: KV-cache write and attention core, with MLA's
 *  absorbed W_UK / W_UV products at decode and its kv_b_proj up-projection at prefill), always a splitting op;
 *  `moe`: the fused-MoE custom op (moe_forward / moe_forward_shared: top-k, dispatch, experts, shared experts,
 *  combine), a splitting op only where the all-to-all backend's trait says so (models/All2AllTable.hpp). */
enum class GraphSplit { none, attention, moe };

/** @brief What limits an op's duration. */
enum class Bound { compute, memory, table, network };
std::string bound_name(Bound b);

enum class Phase { decode, prefill };
/** @brief The backend's name (models/All2AllTable.hpp). */
std::string backend_name(All2AllBackend b);

/** @brief Parallel layout of the deployment, as the cost models need it. */
struct ParallelSpec {
  int dp                 = 1;
  int ep                 = 1;
  int tp                 = 1;
  All2AllBackend backend = All2AllBackend::deepep_low_latency;
};

/** @brief The work one rank (or one micro-batch on it) does in one layer of one step: the one step-shape type (a
 *  scenario's single step, a serving step's cache key, a micro-batch's costing). Its token count is `tokens`, the
 *  rank's new tokens this step (vLLM's num_tokens; the scenario key workload.tokens_per_rank). */
struct StepShape {
  Phase phase     = Phase::decode;
  int tokens      = 0; ///< new tokens on this rank (decode: one per request; prefill: prompt tokens)
  int batch       = 0; ///< requests these tokens belong to
  int context_len = 0; ///< KV length each request attends over (decode) / prompt length (prefill; in a mixed step,
                       ///< the mean over the prompt part's requests)
  /** A mixed step (phase prefill): of `tokens` and `batch`, the requests that decode this step beside the prompt
   *  chunks, their new tokens (one each, 1 + drafts under speculative decoding) and their mean KV length. The
   *  engines run these on the decode attention kernel (vLLM's MLACommonImpl.forward splits the batch at
   *  num_decode_tokens: decodes on the absorbed kernel, prompts on the prefill path), so only the prompt part's
   *  context is up-projected. All 0: no decode part (every decode-phase shape). */
  int decode_tokens                        = 0;
  int decode_batch                         = 0;
  int decode_context_len                   = 0;
  auto operator<=>(const StepShape&) const = default;
};

/** @brief A shape's prompt part: the whole shape less its decode part (StepShape::decode_tokens...). */
StepShape prompt_part(const StepShape& s);
/** @brief A mixed shape's decode part as a decode-phase shape (empty: tokens 0 when there is none). */
StepShape decode_part(const StepShape& s);

/** @brief One kernel of an op as the SM-scaling model needs it: its full-GPU time and the table key that may hold
 *  a per-shape SM table for it. */
struct OpKernelPart {
  double us = 0;
  std::string table_family; ///< KernelWork::table_family ("" = none)
  std::map<std::string, int> table_dims;
  double table_tokens = 0;
  std::string name{};                ///< KernelWork::name
  std::string shape{};               ///< KernelWork::shape
  std::string source{};              ///< KernelWork::source: where a serving engine launches it
  std::string floor_family{};        ///< KernelWork::floor_family
  bool floored = false;              ///< its family's floor set its time
  std::string timed_by{};            ///< KernelTime::table: the table family that timed it ("" = the roofline)
  double flops        = 0;           ///< its floating-point operations
  DType compute_dtype = DType::bf16; ///< the tensor-core precision its FLOPs run at (CostGuards' peak)
  bool on_links       = false;       ///< a collective priced by the fabric model (KernelWork::fabric_us): no SM scaling
};

struct OpCost {
  OpKind kind  = OpKind::A0;
  double flops = 0;        ///< floating-point operations
  double bytes = 0;        ///< compute ops: HBM bytes (weights + activations + KV); D/C: the bytes DeepEP's (or
                           ///< NCCL's) benchmark divides by the time (All2AllModel RankComm::reported_bytes)
  double weight_bytes = 0; ///< the part of `bytes` that is weights (read again by every micro-batch)
  double duration_us  = 0; ///< on the whole GPU (compute ops) or alone on the fabric (D/C)
  Bound bound         = Bound::compute;
  std::string
      sm_family; ///< HwProfile::sm_scaling key for compute ops ("gemm", "grouped_gemm", "attention"); empty for D/C
  std::string method; ///< how duration_us was obtained (table name, roofline terms, link), for --explain
  int kernels    = 1; ///< kernel launches the op issues (each costs the host a launch)
  double recv_us = 0; ///< D/C: the receive kernel's part of duration_us (DeepEP low-latency); 0 = not separable
  std::vector<OpKernelPart> parts; ///< compute ops: their kernels, summing to duration_us; empty for D/C
  /** One entry per kernel launch, in launch order: the custom op it runs inside (GraphSplit::none: a plain graph
   *  kernel). Empty = every launch GraphSplit::none. */
  std::vector<GraphSplit> launch_split{};
};

struct LayerCosts {
  bool moe = false;
  std::vector<OpCost> ops; ///< in the serial order A0 A1 D MLP S C; D/C absent on dense layers, S when no shared expert
  /** MoE layers under CommSetup::expert_load eplb_residual: the busiest rank's load over the mean (1 = ideal), and
   *  how much longer its MLP, D and C take than a rank at the mean load: the time the other ranks spin in the
   *  collectives waiting for it (ops above are the busiest rank's). */
  double hot_rank_load = 1.0;
  double straggler_us  = 0;
  const OpCost* find(OpKind k) const;
};

/** @brief Costs of every op of one layer for `shape` on one rank. D and C come from models/All2AllModel (the
 *  cluster path's model) on the expected traffic of `comm.routing` with balanced routing; under
 *  `comm.expert_load` eplb_residual the MLP, D and C are the busiest rank's (LayerCosts::hot_rank_load).
 *  @throws std::invalid_argument on bad inputs, or when ep > 1 and `comm.net` is null. */
LayerCosts layer_costs(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                       bool moe_layer, const CommSetup& comm);

/** @brief A MoE layer's ops after attention (D, MLP, S, C, with the layer's hot_rank_load and straggler_us) kept by
 *  the shape's tokens, all of the shape they read (the MoE DP chunks' requests are read by none of their kernels),
 *  for one deployment and CommSetup: the shapes of a serving run that differ only in requests and KV lengths share
 *  them. */
struct MoeOpsMemo {
  std::map<int, LayerCosts> by_tokens; ///< ops holds D MLP S C only
  /** A MoE DP chunk's dispatch or combine by (kind, chunk tokens, the routing's hot_rank_load) and its routed experts
   *  by (chunk tokens, load): the chunks of different shapes share them. */
  std::map<std::tuple<OpKind, int, double>, OpCost> all_to_all;
  std::map<std::pair<int, double>, OpCost> mlp;
};

/** @brief layer_costs of a MoE layer with its ops after attention from `memo` (costed there at a new tokens count);
 *  the same costs bit for bit. */
LayerCosts layer_costs(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                       const CommSetup& comm, MoeOpsMemo& memo);

/** @brief A1 of one layer as layer_costs costs it: the attention kernels (models/AttentionOps) and, with tp > 1,
 *  the all-reduce of o_proj's output over the TP group on `comm.net`'s links (models/CommOps).
 *  @throws std::invalid_argument when tp > 1 and `comm.net` is null. */
OpCost attention_a1_cost(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                         bool moe_layer, const CommSetup& comm);

/** @brief The routed experts' op (MLP) of one MoE layer alone, as layer_costs costs it (`redundant_experts`: EPLB
 *  slots over the EP group); for callers that re-cost only the experts per rank. */
OpCost routed_mlp_cost(const ModelSpec& model, const HwProfile& hw, const ParallelSpec& par, const StepShape& shape,
                       int redundant_experts, double load = 1.0);

/** @brief Duration of a compute op given `sms` of the GPU. A kernel of the op whose table family and dims have a
 *  per-shape SM table measured at exactly `sms` (HwProfile::sm_tables) takes its speed from that table at its tokens;
 *  the others (or the whole op when none has one) scale by the profile's SM-scaling curve for the op's family.
 *  Sets *linear_fallback when the profile has no curve for the family and the SM fraction was used. */
double duration_on_sms_us(const HwProfile& hw, const OpCost& op, int sms, bool* linear_fallback = nullptr);

} // namespace dbosim::models

/* dbosim — the kernels of the feed-forward ops: routed experts (MLP on MoE layers), the shared expert (S) and the
 * dense FFN of dense layers (MLP on dense layers). */
#pragma once
#include "models/KernelCost.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

#include <vector>

namespace dbosim::models {

/** @brief How the routed experts' work lands on one rank under uniform routing. */
struct ExpertLoad {
  int local_experts     = 0; ///< routed experts this rank holds: routed / ep (all of them when ep = 1)
  double group_tokens   = 0; ///< distinct tokens entering the EP group: tokens * ep / tp (tokens when ep = 1)
  double rows           = 0; ///< token copies this rank's experts receive: group_tokens * top_k * local / routed
  double active_experts = 0; ///< expected local experts receiving >= 1 copy: local * (1 - (1 - top_k/routed)^group)
  int intermediate      = 0; ///< width of one expert on this rank (divided by tp when ep = 1: TP-sharded experts)
};

/** @brief The expert load of `s` on one rank (see ExpertLoad). `redundant_experts`: EPLB's extra replica slots over
 *  the EP group (vLLM/SGLang: num_physical_experts = routed + redundant, divisible by ep); balanced routing splits
 *  an expert's load evenly over its replicas, so each slot sees top_k / physical of the tokens. */
ExpertLoad expert_load(const ModelSpec& m, const ParallelSpec& par, const StepShape& s, int redundant_experts = 0);

/** @brief `l` on a rank that receives `load` times the mean rows (models/ExpertImbalance: the busiest rank): rows
 *  scaled, and each local slot missed with the mean's probability to the power `load` (as if load times as many
 *  tokens reached the group). */
ExpertLoad scaled_expert_load(const ModelSpec& m, const ExpertLoad& l, int redundant_experts, int ep, double load);

/** @brief Routed experts: grouped GEMM gate+up -> SiLU-and-mul -> grouped GEMM down, over `expert_load` rows.
 *  Each active local expert's weights are read once per call. `load`: this rank's rows over the mean
 *  (scaled_expert_load; 1 = balanced). */
std::vector<KernelWork> routed_mlp_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s,
                                           int redundant_experts = 0, double load = 1.0);

/** @brief A dense SwiGLU MLP on all local tokens, intermediate width `intermediate` split over tp:
 *  gate_up GEMM -> SiLU-and-mul -> down GEMM. Used for the shared expert(s) and for dense layers' FFN; `cls` names
 *  which (its precision format: models/Precision.hpp). */
std::vector<KernelWork> dense_mlp_kernels(const std::string& prefix, const ModelSpec& m, const ParallelSpec& par,
                                          const StepShape& s, int intermediate, OpClass cls = OpClass::dense_mlp);

} // namespace dbosim::models

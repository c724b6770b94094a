/* dbosim — the per-step work outside the decoder layers, as a serving engine launches it: the token embedding
 * before layer 0, and after the last layer the final RMSNorm, the LM head over the positions that sample, and the
 * sampler. Pure functions: no SimGrid, no I/O. */
#pragma once
#include "models/KernelCost.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

#include <vector>

namespace dbosim::models {

/** @brief Kernels of one step outside the layers for `s` on one rank (its tokens, its requests). vLLM computes logits
 *  only at the positions that sample: one per request in a decode step, and a prefill step's requests (their last
 *  chunk samples; counted as all `batch` requests). The LM head's vocabulary is split over tp. */
std::vector<KernelWork> step_work_kernels(const ModelSpec& m, const ParallelSpec& par, const StepShape& s);

/** @brief The per-step work as one op-like cost (kind A0 is not meaningful here: read `parts`, `duration_us`,
 *  `kernels` and `method`). */
OpCost step_work_cost(const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par, const StepShape& s);

/** @brief The part of `s` that step_work_kernels reads: its tokens and batch (the sampled positions). Shapes with
 *  equal keys have equal step work (a memo's key). */
StepShape step_work_key(const StepShape& s);

} // namespace dbosim::models

/* dbosim — dispatch (D) and combine (C) of one MoE layer as an op cost: a thin adaptor over models/All2AllModel
 * (the cluster path's model) on the expected traffic of balanced routing, so the single-rank and the cluster paths
 * give the same D/C time. */
#pragma once
#include "hw/HwProfile.hpp"
#include "models/CommSetup.hpp"
#include "models/KernelCost.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

namespace dbosim::models {

/** @brief Bytes of one token copy: dispatch = hidden x dispatch dtype (+ one fp32 scale per 128 elements when the
 *  payload is 8-bit or less); combine = hidden x combine dtype. */
double dispatch_bytes_per_copy(const ModelSpec& m);
double combine_bytes_per_copy(const ModelSpec& m);

/** @brief D or C (kind must be OpKind::D or OpKind::C): the slowest rank's duration under balanced routing of
 *  `s.tokens` tokens per rank over `comm.routing`'s placement, by the backend's All2AllModel entry.
 *  @throws std::invalid_argument on a bad kind, missing network facts, or a placement that does not fit ep. */
OpCost all_to_all_cost(OpKind kind, const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par,
                       const StepShape& s, const CommSetup& comm);

/** @brief The all-reduce of a row-parallel layer's output over the tensor-parallel group (par.tp > 1): `tokens` rows
 *  of the hidden state in BF16, as the engines reduce o_proj's and the dense MLP's down projection (vLLM
 *  RowParallelLinear with reduce_results). Priced as NCCL's ring: 2 (tp - 1) steps, each a link hop, moving
 *  2 (tp - 1) / tp of the buffer over the GPU's links (NVLink or xGMI: comm.net's achievable bandwidth and the
 *  profile's link latency); a group wider than the node's domain (tp > comm.gpus_per_node) runs its ring through
 *  the NICs (their bandwidth and latency, one switch hop). A kernel of the compute stream (KernelWork::fabric_us).
 *  @throws std::invalid_argument when tp <= 1 or `comm.net` is null. */
KernelWork tp_all_reduce_kernel(const std::string& name, double tokens, const ModelSpec& m, const HwProfile& hw,
                                const ParallelSpec& par, const CommSetup& comm, const std::string& source);

} // namespace dbosim::models

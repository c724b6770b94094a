/* dbosim — dispatch (D) and combine (C) all-to-all of one MoE layer, analytic first cut (the cluster model
 * replaces it): per-rank bytes over one link, time = latency + bytes / bandwidth. */
#pragma once
#include "models/HwProfile.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

namespace dbosim::models {

/** @brief Bytes of one token copy: dispatch = hidden x dispatch dtype (+ one fp32 scale per 128 elements when the
 *  payload is 8-bit or less); combine = hidden x combine dtype. */
double dispatch_bytes_per_copy(const ModelSpec& m);
double combine_bytes_per_copy(const ModelSpec& m);

/** @brief Token copies that leave this rank: tokens x top_k x (ep-1)/ep under uniform routing. */
double copies_leaving_rank(const ModelSpec& m, const ParallelSpec& par, const StepShape& s);

/** @brief D or C (kind must be OpKind::D or OpKind::C) over NVLink when ep <= nvlink_domain_size, else the NIC.
 *  @throws std::invalid_argument when the profile lacks the link's bandwidth. */
OpCost all_to_all_cost(OpKind kind, const ModelSpec& m, const HwProfile& hw, const ParallelSpec& par,
                       const StepShape& s);

} // namespace dbosim::models

/* dbosim — which GPU runs which `precision:` format: a format needs its tensor-core peak in the profile. */
#pragma once
#include "hw/HwProfile.hpp"
#include "models/Quant.hpp"

#include <string>

namespace dbosim::models {

/** @brief The tensor-core dtype whose peak `q` runs at (fp8 for FP8 and W4A8, fp4 for NVFP4 and MXFP4). */
DType compute_dtype(WeightQuant q);
/** @brief Why `hw` cannot run format `q`; "" when it can. A format needs its compute dtype's peak in the profile;
 *  NVFP4 is NVIDIA's (Blackwell) format: a ROCm profile's fp4 peak is MXFP4's (CDNA 4 runs the OCP MX formats). */
std::string quant_unsupported(const HwProfile& hw, WeightQuant q);
/** @brief Why `hw` cannot carry an all-to-all payload of `t` ("" when it can): fp4 payloads are NVFP4 (Blackwell). */
std::string payload_unsupported(const HwProfile& hw, DType t);

} // namespace dbosim::models

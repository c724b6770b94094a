/* dbosim — what a linear layer's format costs: bytes per weight and per input activation element with their scales,
 * the tensor-core peak it runs at, the kernel families that time it; and the all-to-all payload bytes per element.
 * An op class with no `precision:` format (ModelSpec::precision) runs at the model's `dtypes:` as priced before the
 * precision keys (no scale bytes in the GEMM terms), so a scenario without them prices as it did. */
#pragma once
#include "hw/HwProfile.hpp"
#include "models/ModelSpec.hpp"
#include "models/Quant.hpp"

#include <string>

namespace dbosim::models {

/** @brief How one linear layer's GEMM is priced. */
struct LinearFormat {
  std::string name; ///< "fp8" (a `dtypes:` dtype) or "nvfp4" (a `precision:` format), for --explain
  DType compute           = DType::bf16; ///< the tensor-core peak (HwProfile::peak_flops_per_s) the compute term uses
  double weight_bytes     = 2;           ///< HBM bytes per weight element, scales included
  double activation_bytes = 2;           ///< HBM bytes per input activation element the GEMM reads, scales included
  bool quantize_input     = false;       ///< an activation-quantization kernel runs before the GEMM
  double quant_out_bytes = 0; ///< bytes per element that kernel writes (values and scales); 0: vLLM's FP8 one as before
  std::string table;          ///< table family suffix: gemm_<table>, grouped_gemm_<table>
  std::string table_prefer;   ///< dense GEMM family tried first ("gemm_fp8_block"); "" none
  std::string floor;          ///< dense GEMM floor family ("gemm", "gemm_fp8")
};

/** @brief A `dtypes:` dtype as priced before the precision keys: its bytes, no scales. */
LinearFormat dtype_format(DType t);
/** @brief A `precision:` format: its bytes with scales (NVFP4 one E4M3 byte per 16, MXFP4 one E8M0 byte per 32, FP8
 *  block one fp32 per 128x128 weights and per 1x128 activations), its peak and families. */
LinearFormat quant_format(WeightQuant q);
/** @brief The tensor-core dtype whose peak `q` runs at (fp8 for FP8 and W4A8, fp4 for NVFP4 and MXFP4). */
DType compute_dtype(WeightQuant q);
/** @brief The format op class `c` of `m` runs in: its precision format, else its `dtypes:` dtype (attention:
 *  attn_dtype; the experts and MLPs: weight_dtype; LM head: bf16). */
LinearFormat linear_format(const ModelSpec& m, OpClass c);

/** @brief Bytes per weight element of op class `c` (scales included for a precision format), for memory footprints. */
double weight_bytes_per_element(const ModelSpec& m, OpClass c);

/** @brief Bytes one all-to-all payload element takes on the wire with its scales: bf16 2; fp8 1 + one fp32 per 128
 *  (DeepEP's FP8 dispatch); fp4 (NVFP4) 0.5 + one E4M3 byte per 16. */
double payload_bytes_per_element(DType t);

/** @brief Why `hw` cannot run format `q`; "" when it can. A format needs its compute dtype's peak in the profile;
 *  NVFP4 is NVIDIA's (Blackwell) format: a ROCm profile's fp4 peak is MXFP4's (CDNA 4 runs the OCP MX formats). */
std::string quant_unsupported(const HwProfile& hw, WeightQuant q);
/** @brief Why `hw` cannot carry an all-to-all payload of `t` ("" when it can): fp4 payloads are NVFP4 (Blackwell). */
std::string payload_unsupported(const HwProfile& hw, DType t);

} // namespace dbosim::models

/* dbosim — numeric formats of weights, activations, KV cache and all-to-all payloads. */
#pragma once
#include <string>

namespace dbosim::models {

enum class DType { fp32, bf16, fp16, fp8, fp4 };

/** @brief Storage size in bytes of one element (fp4 = 0.5). */
double dtype_bytes(DType t);
/** @brief Lower-case name as written in YAML ("bf16"). */
std::string dtype_name(DType t);
/** @brief Parses a dtype name; returns false if unknown. Accepts HF spellings (bfloat16, float8_e4m3fn, ...). */
bool parse_dtype(const std::string& name, DType& out);
/** @brief The valid names, for error messages. */
std::string dtype_names();

} // namespace dbosim::models

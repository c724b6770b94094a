/* dbosim — per-shape SM tables: one dense GEMM's speed t(full GPU) / t(S SMs) over tokens at one SM count, from the
 * "sm_table" records (green contexts, cuBLASLt told the SM count; each partition point measured right after its
 * full-GPU point). Plain C++, deterministic. */
#pragma once
#include "calibrate/Measurement.hpp"

#include <map>
#include <string>
#include <vector>

namespace dbosim::calib {

struct FitSmTable {
  std::string family;              ///< table family of the kernel: "gemm_bf16", "gemm_fp8"
  std::map<std::string, int> dims; ///< {n, k}
  int sms = 0;                     ///< the partition's SMs (< the full GPU)
  std::vector<double> tokens;      ///< strictly increasing
  std::vector<double> speed;       ///< t(full GPU) / t(sms SMs) at each token count
  std::string source;
};

/** @brief One table per (family, dims, SMs) with at least two token counts that have both a full-GPU and a partition
 *  point, sorted by family, dims, SMs. A record's provenance is the env record that precedes it in the file. A shape's
 *  tables take only the records of the timing (params rest_ms, settle_ms or neither) of its last record in the file;
 *  later records of a point replace earlier ones. */
std::vector<FitSmTable> fit_sm_tables(const std::vector<Measurement>& records, int sm_count);

} // namespace dbosim::calib

/* dbosim — turns raw calibration results into the measured parts of a hardware profile: duration tables on tokens,
 * SM-scaling curves per kernel family, interference factors, the copy kernel's bandwidth vs SMs, host costs.
 * Plain C++, deterministic (same records, same fit). */
#pragma once
#include "calibrate/Measurement.hpp"
#include "calibrate/SmTableFit.hpp"

#include <map>
#include <string>
#include <vector>

namespace dbosim::calib {

struct FitTable {
  std::string family;
  std::map<std::string, int> dims;
  std::vector<double> tokens;
  std::vector<double> us;
  std::string source;
};

struct FitCurve {
  std::vector<double> x;
  std::vector<double> y;
  bool retile = false;
  std::string source;
};

struct FitScalar {
  double value = 0;
  std::string source;
};

struct FittedProfile {
  std::map<std::string, std::string> env; ///< the first run's environment record (provenance)
  int runs = 0;                           ///< env records: 1 + resumes (and later runs appended to the file)
  std::string last_run_date;              ///< the last env record's date (a later run appended to the same file)
  std::vector<FitTable> tables;
  std::map<std::string, FitCurve> sm_scaling;     ///< "gemm", "grouped_gemm", "attention", "memory"
  std::vector<FitSmTable> sm_tables;              ///< per-shape GEMM speed over tokens at the DBO partitions
  std::map<std::string, FitScalar> interference;  ///< "compute_with_comm", "compute_with_comm_partitioned", ...
  FitCurve comm_kernel_gbps;                      ///< x = CTAs (= SMs held), y = GB/s of payload
  std::map<std::string, FitScalar> host_us;       ///< launch_cpu, graph_replay_kernel, event, stream_sync
  std::map<std::string, FitScalar> kernel_floors; ///< per floor family: tiny kernel's time in a graph minus the gap
  FitScalar best_bf16_tflops, best_fp8_tflops, best_attention_tflops, best_stream_gbps;
  std::map<std::string, std::string> clocks; ///< sm_clock_mhz min / median / max over the measurements
};

/** @brief The table families written to a profile and the raw families each is made of. Attention has two
 *  implementations each (prefill: PyTorch SDPA and the C++ suite's unfused cuBLAS one; MLA decode: the Triton fused
 *  paged kernel and the unfused cuBLAS one): each point of the table takes the faster. */
std::vector<std::pair<std::string, std::vector<std::string>>> table_families();

/** @brief Fits every measured part; throws std::runtime_error when the records lack an environment record. */
FittedProfile fit_profile(const std::vector<Measurement>& records);

/** @brief The scaling family a kernel family belongs to ("gemm_fp8" -> "gemm"); "" when it is not scaled. */
std::string scaling_family(const std::string& kernel_family);

} // namespace dbosim::calib

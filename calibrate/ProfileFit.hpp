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

/** @brief What a table's preferred implementation (preferred_family) supplied: its raw family, its implementation
 *  (the records' `impl`, as the table's source names it), one of its records' info (environment, commits), and how
 *  many of the table's points it measured. */
struct PreferredTable {
  std::string family;
  std::string impl;
  std::map<std::string, std::string> info;
  int points = 0; ///< points taken from it
  int total  = 0; ///< points of all the family's tables
};

struct FittedProfile {
  std::map<std::string, std::string> env; ///< the first run's environment record (provenance)
  int runs = 0;                           ///< env records: 1 + resumes (and later runs appended to the file)
  std::string last_run_date;              ///< the last env record's date (a later run appended to the same file)
  std::vector<FitTable> tables;
  std::map<std::string, FitCurve> sm_scaling;    ///< "gemm", "grouped_gemm", "attention", "memory"
  std::vector<FitSmTable> sm_tables;             ///< per-shape GEMM speed over tokens at the DBO partitions
  std::map<std::string, FitScalar> interference; ///< "compute_with_comm", "compute_with_comm_partitioned", ...
  FitCurve comm_kernel_gbps;                     ///< x = CTAs (= SMs held), y = GB/s of payload
  std::map<std::string, FitScalar> host_us;      ///< launch_cpu, graph_replay_kernel, event, stream_sync; graph_launch,
                                                 ///< eager_kernel_gap, graph_piece_gap when measured
  std::map<std::string, FitScalar> kernel_floors; ///< per floor family: tiny kernel's time in a graph minus the gap
  FitScalar best_bf16_tflops, best_fp8_tflops, best_attention_tflops, best_stream_gbps;
  std::map<std::string, std::string> clocks;              ///< sm_clock_mhz min / median / max over the measurements
  std::map<std::string, PreferredTable> preferred_tables; ///< per table family that took a preferred implementation
};

/** @brief The table families written to a profile and the raw families each is made of. Attention has several
 *  implementations each (prefill: PyTorch SDPA and the C++ suite's unfused cuBLAS one; MLA decode: FlashMLA, the
 *  Triton fused paged kernel and the unfused cuBLAS one): each point of the table takes the fastest, except where the
 *  table has a preferred implementation (preferred_family) that measured the point. */
std::vector<std::pair<std::string, std::vector<std::string>>> table_families();

/** @brief The raw family whose points a table takes wherever it measured them, fastest or not: the kernel the
 *  serving engine runs ("mla_decode" -> "mla_decode_flashmla": vLLM and SGLang decode MLA with FlashMLA on Hopper);
 *  "" when the table takes the fastest implementation at every point. */
std::string preferred_family(const std::string& table_family);

/** @brief Fits every measured part; throws std::runtime_error when the records lack an environment record. */
FittedProfile fit_profile(const std::vector<Measurement>& records);

/** @brief The scaling family a kernel family belongs to ("gemm_fp8" -> "gemm"); "" when it is not scaled. */
std::string scaling_family(const std::string& kernel_family);

} // namespace dbosim::calib

/* dbosim — a GPU's hardware profile: datasheet facts and measured tables, each with its source.
 * Filled by config/HwProfileLoader from hwprofiles/<name>.yaml (format: hwprofiles/README.md). */
#pragma once
#include "hw/DType.hpp"
#include "hw/Platform.hpp"

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dbosim::models {

/** @brief The generations a profile's `generation:` may name: NVIDIA Hopper (H100, H200, H800), Blackwell (B200,
 *  GB200, GB300) and AMD CDNA (MI300X, MI325X, MI355X). */
inline std::vector<std::string> hw_generations() { return {"hopper", "blackwell", "cdna"}; }

/** @brief Where a profile's numbers come from. */
struct Provenance {
  std::string kind; ///< "datasheet", "measured" or "derived" (rescaled from a measured parent: calibrate/ProfileDerive)
  std::string date; ///< ISO date of the measurement or of the datasheet reading
  std::map<std::string, std::string>
      details; ///< measured: gpu_name, sm_count, clocks, driver, cuda, cublas, nccl, git_commit, raw_results
};

/** @brief A piecewise-linear curve y(x), x strictly increasing. */
struct Curve {
  std::vector<double> x;
  std::vector<double> y;
  std::string source;
  bool empty() const { return x.empty(); }
};

/** @brief How a kernel family's throughput scales with the SMs it is given (green context / SM budget).
 *  speed(sms) = fraction of its full-GPU throughput; duration = full_duration / speed. */
struct SmScaling {
  Curve speed;        ///< x = SMs, y = relative speed (1.0 at the full GPU); empty = linear fallback
  bool retile = true; ///< true: the kernel is told its SM budget and re-tiles; false: fixed grid (may add a wave)
};

/** @brief A measured duration table for one kernel at fixed dims, interpolated on `tokens`.
 *  Key examples: family "gemm_bf16" dims {n: 4096, k: 7168}; "grouped_gemm_fp8" dims {experts, n, k};
 *  "mla_decode" dims {context: 4096} with tokens = batch. */
struct OpTable {
  std::string family;
  std::map<std::string, int> dims;
  Curve us_by_tokens; ///< x = tokens (M, or batch for attention), y = microseconds on the full GPU
  /** Past the last point: false scales the last point by tokens (a measured table's own trend); true takes the larger
   *  of the last point and the roofline (a published table that stops at a small M: `beyond_last: roofline`). */
  bool roofline_past_last = false;
};

/** @brief Where each family's tables sit in HwProfile::tables (positions ascending): the lookups read a family's
 *  few tables instead of comparing every one. `count` is the number of tables it was built over: a profile whose
 *  table list has changed size since is scanned whole (models::index_tables builds it). */
struct TableIndex {
  std::size_t count = 0;
  std::map<std::string, std::vector<std::size_t>, std::less<>> positions;
  /** Per family, the first position of each dims (models::find_table's answer without comparing every table). */
  std::map<std::string, std::map<std::map<std::string, int>, std::size_t>, std::less<>> first_by_dims;
};

/** @brief A measured per-shape SM table: one kernel's speed t(full GPU) / t(sms SMs) over tokens at one SM count
 *  (cuBLASLt's tile choice at each SM count makes the speed depend on the shape; the family curve is a median). */
struct SmTable {
  std::string family;              ///< table family of the kernel: "gemm_bf16", "gemm_fp8"
  std::map<std::string, int> dims; ///< as OpTable::dims ({n, k})
  int sms = 0;                     ///< the SM count it was measured at
  Curve speed_by_tokens;           ///< x = tokens, y = relative speed at `sms`
};

/** vLLM's VLLM_DBO_COMM_SMS default on CUDA (vllm/envs.py: 20): SMs the comm kernels hold under DBO. The one place
 *  this default is written: PlatformRules, the scenario's overlap.dbo_comm_sms and the calibration suite read it. */
inline constexpr int vllm_dbo_comm_sms = 20;

/** @brief The serving stack's rules on this GPU (vLLM's per-platform defaults), each with its source; read from the
 *  profile's optional `platform:` section; absent = CUDA's. */
struct PlatformRules {
  Platform stack   = Platform::cuda;    ///< graphs: CUDA graphs on cuda, HIP graphs on rocm
  int dbo_comm_sms = vllm_dbo_comm_sms; ///< VLLM_DBO_COMM_SMS on this platform: SMs (CUs) comm holds under DBO
  /** false: vLLM forces the comm SM budget to 0 for DeepEP high-throughput under DBO (no CU partition on ROCm) */
  bool deepep_ht_dbo_partition = true;
};

/** @brief Measured slowdown factors (each >= 1) where compute and an SM-resident comm kernel share the GPU (profile
 *  section interference:); a factor the profile does not give is absent, and a step plan then takes 1 and says so. */
struct Interference {
  std::optional<double> comm_with_compute;             ///< the comm kernel beside compute, both on every SM
  std::optional<double> comm_with_compute_partitioned; ///< the same on disjoint green-context partitions
  std::optional<double> compute_with_comm;             ///< compute beside the comm kernel, both on every SM
  std::optional<double> compute_with_comm_partitioned; ///< the same on disjoint green-context partitions
  /** The profile's key of each factor, in key order. */
  static constexpr std::array<std::pair<const char*, std::optional<double> Interference::*>, 4> keys{{
      {"comm_with_compute", &Interference::comm_with_compute},
      {"comm_with_compute_partitioned", &Interference::comm_with_compute_partitioned},
      {"compute_with_comm", &Interference::compute_with_comm},
      {"compute_with_comm_partitioned", &Interference::compute_with_comm_partitioned},
  }};
  /** @brief The factors the profile gives, by key, in key order. */
  std::vector<std::pair<std::string, double>> given() const
  {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& [key, member] : keys)
      if ((this->*member).has_value())
        out.emplace_back(key, *(this->*member));
    return out;
  }
};

struct HwProfile {
  std::string name; ///< "h200"
  std::string gpu;  ///< marketing name, "NVIDIA H200 SXM 141GB"
  /// The GPU generation (hw_generations()): the validate e2e cases are grouped by it and the uncertainty band of
  /// a run on this GPU is its generation's; empty when the profile names none.
  std::string generation;
  Provenance provenance;

  int sm_count = 0;
  /** shared memory one SM holds for its resident CTAs (`smem_per_sm`); 0: the profile does not say */
  int smem_bytes_per_sm = 0;
  std::map<DType, double> peak_flops_per_s; ///< dense tensor-core peak per dtype
  double hbm_bytes_per_s    = 0;
  double hbm_capacity_bytes = 0;
  double nvlink_bytes_per_s = 0; ///< per GPU, per direction
  double nvlink_latency_us  = 0;
  int nvlink_domain_size    = 0; ///< GPUs in one NVLink domain (8 for HGX, 72 for NVL72)
  double nic_bytes_per_s    = 0; ///< scale-out NIC per GPU, per direction
  double nic_latency_us     = 0;

  double launch_cpu_us          = 0; ///< host CPU time to launch one kernel (eager)
  double graph_replay_kernel_us = 0; ///< per-kernel cost inside a CUDA-graph replay
  double event_us               = 0; ///< cudaEventRecord / cudaStreamWaitEvent host cost
  double stream_sync_us         = 0; ///< cudaStreamSynchronize round trip on an idle stream
  // Optional host keys (< 0: not in the profile; sim/plan/StepPlanBuilder falls back, with a note in the plan):
  double graph_launch_us     = -1; ///< host time of one CUDA-graph launch (torch.cuda.CUDAGraph.replay)
  double eager_kernel_gap_us = -1; ///< GPU-side gap per kernel in eager mode, the host ahead (cf. graph_replay_kernel)
  double graph_piece_gap_us  = -1; ///< GPU time a boundary between two back-to-back graph launches adds
  /** Host time a PyTorch engine's Python adds to each kernel it launches eagerly (its module code, dispatcher and
   *  launcher), beyond launch_cpu's C++ launch: the engines dbosim models all run their forward from Python */
  double python_launch_us = -1;

  double gemm_efficiency = 0; ///< roofline fraction of peak reached by large GEMMs (datasheet fallback)
  /** Roofline fraction of the FP8 peak reached by large FP8 GEMMs (dense and grouped), measured apart from BF16's
   *  because FP8 GEMMs reach a smaller fraction of their (twice as high) peak; 0 = not in the profile: FP8 GEMMs use
   *  gemm_efficiency. */
  double gemm_fp8_efficiency = 0;
  /** Likewise for FP4 GEMMs (NVFP4 / MXFP4) against the FP4 peak; 0 = not in the profile: gemm_efficiency. */
  double gemm_fp4_efficiency  = 0;
  double attention_efficiency = 0; ///< roofline fraction of peak reached by attention kernels
  double memory_efficiency    = 0; ///< fraction of HBM bandwidth reached by streaming kernels

  std::vector<OpTable> tables;                   ///< measured kernel durations (empty for datasheet profiles)
  std::shared_ptr<const TableIndex> table_index; ///< `tables` by family (null: lookups scan them)
  std::map<std::string, SmScaling> sm_scaling;   ///< per kernel family: "gemm", "grouped_gemm", "attention", ...
  std::vector<SmTable> sm_tables;                ///< per-shape speeds at measured SM counts (before sm_scaling)
  Interference interference;                     ///< slowdown factors beside an SM-resident comm kernel
  /// Per kernel family, the least GPU time one launch takes (tiny sizes, back to back in a CUDA graph, the graph's
  /// per-kernel gap excluded): "gemm", "grouped_gemm", "rmsnorm", "elementwise", "reduction", "quant", ...
  std::map<std::string, double> kernel_floor_us;
  Curve comm_kernel_bytes_per_s_by_sms; ///< SM-resident copy kernel bandwidth vs SMs (CTAs) it holds
  PlatformRules platform;               ///< the serving stack's defaults on this GPU (`platform:`)

  std::map<std::string, std::string> sources; ///< per scalar key: where the number comes from

  bool measured() const { return provenance.kind == "measured"; }
};

} // namespace dbosim::models

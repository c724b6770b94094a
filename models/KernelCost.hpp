/* dbosim — one kernel launch of an op: its work (FLOPs, HBM bytes) and its duration on the whole GPU, from a
 * measured table when the profile has one for the kernel's family and dims, else from the roofline
 *   max(flops / (peak[dtype] * efficiency), bytes / (hbm * memory_efficiency)).
 * Ops (OpCost) are sums of kernels; builders for the common kernel shapes live here too. */
#pragma once
#include "hw/HwProfile.hpp"
#include "models/OpCost.hpp"
#include "models/Precision.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dbosim::models {

/** @brief Which roofline fraction bounds the compute term. `memory`: a streaming kernel, no compute term. */
enum class Efficiency { gemm, attention, memory };

/** @brief What a kernel's table axis means. `tokens`: the table's own axis (M, tokens per expert, batch), looked up by
 *  table_us. `causal_tokens`: the length of a causal self-attention with the kernel's query-key pairs
 *  (PrefillAttention.hpp): looked up by causal_table_us, and the time is never below the kernel's roofline. */
enum class TableAxis { tokens, causal_tokens };

/** @brief The work of one kernel launch. */
struct KernelWork {
  std::string name;                    ///< "q_b_proj", "mla_decode", ...
  double flops          = 0;           ///< floating-point operations
  double bytes          = 0;           ///< HBM bytes read + written (weights, activations, KV cache)
  double weight_bytes   = 0;           ///< the part of `bytes` that is weights
  DType compute_dtype   = DType::bf16; ///< tensor-core precision of the compute term
  Efficiency efficiency = Efficiency::gemm;
  std::string table_family; ///< HwProfile::tables family that may cover it; empty = none
  std::map<std::string, int> table_dims;
  double table_tokens = 0; ///< the table's interpolation axis (M, tokens per expert, batch, ...)
  /// A table family tried before `table_family` for the duration (same dims and axis): FP8 GEMMs prefer the
  /// block-scaled measurement (1x128 activation / 128x128 weight scales, as DeepSeek-style FP8 checkpoints and
  /// DeepGEMM run) over the per-tensor one; `table_family` keeps naming the kernel for its SM tables.
  std::string table_prefer;
  /// The kernel runs this fraction of the table's work: a grouped GEMM whose table loads every local expert when only
  /// some of them receive tokens (the kernel skips empty experts) takes table(tokens per active expert) x active/local.
  double table_scale = 1;
  /// A dim of `table_dims` whose value may fall between the profile's tables (MLA decode's context): with no table
  /// at the exact value, the kernel takes the two tables around it (every other dim equal), each at table_tokens,
  /// linearly between them in that dim. Outside their range: the roofline. "" = exact dims only.
  std::string table_interp_dim;
  /// Kernels this work launches, timed together (FlashMLA's call: the split-KV kernel and its combine, one table).
  int launches = 1;
  std::string floor_family; ///< HwProfile::kernel_floor_us key: the least a launch of this kind takes ("" = none)
  GraphSplit split = GraphSplit::none; ///< the vLLM custom op it runs inside, if that op can split piecewise graphs
  std::string shape;                   ///< the shape as launched, for --explain ("M=128 N=2112 K=7168")
  std::string source;                  ///< where a serving engine launches it (vLLM file: function), for --explain
  TableAxis table_axis = TableAxis::tokens;
  /// A collective over the GPU's links (the tensor-parallel all-reduce): its duration from the fabric model
  /// (models/CommOps), not from the roofline or a table; negative = a compute kernel.
  double fabric_us = -1;
};

/** @brief A kernel's duration on the whole GPU and how it was obtained. */
struct KernelTime {
  double us    = 0;
  Bound bound  = Bound::memory;
  bool floored = false; ///< the family's measured floor set the time
  std::string table;    ///< the table family that timed it ("" = the roofline)
  std::string method;
};

/** @brief Duration of `k` on the whole GPU of `hw`: its table (times table_scale) or roofline, and never less than
 *  the profile's floor for its floor family (a kernel that does any work).
 *  @throws std::invalid_argument when the profile lacks a number the roofline needs. */
KernelTime kernel_time(const HwProfile& hw, const KernelWork& k);

/** @brief A compute op made of `kernels` (each timed by kernel_time; defined in OpCost.cpp): their sums, their parts,
 *  the bound of the longest one. Taken by value: each kernel's table family and dims move into its part. */
OpCost sum_kernels(const HwProfile& hw, OpKind kind, const std::string& sm_family, std::vector<KernelWork> kernels);

/** @brief A dense GEMM [m x k] x [k x n] with weights of `weight_dtype` (activations in the same precision when
 *  it is 8-bit or less, as DeepGEMM/cuBLASLt FP8 GEMMs quantize them; bf16 otherwise), bf16 output.
 *  Table family gemm_<dtype>, dims {n, k}, axis m. */
KernelWork gemm_kernel(const std::string& name, double m, int n, int k, DType weight_dtype);
/** @brief The same GEMM in `f`'s format: its weight and activation bytes (scales included), its peak and families. */
KernelWork gemm_kernel(const std::string& name, double m, int n, int k, const LinearFormat& f);

/** @brief A grouped GEMM over `local_experts` experts of which `active_experts` (expected) receive tokens;
 *  `rows` token copies in total, each [1 x k] x [k x n]. Table family grouped_gemm_<dtype>, dims {experts, n, k},
 *  axis tokens per expert = rows / local_experts. */
KernelWork grouped_gemm_kernel(const std::string& name, double rows, double active_experts, int local_experts, int n,
                               int k, DType weight_dtype);
/** @brief The same grouped GEMM in `f`'s format. */
KernelWork grouped_gemm_kernel(const std::string& name, double rows, double active_experts, int local_experts, int n,
                               int k, const LinearFormat& f);

/** @brief A batched GEMM with one weight matrix per head (MLA's absorbed W_UK / W_UV): `rows` tokens x `heads`
 *  heads, each [1 x k] x [k x n]. No table family (none is calibrated); roofline only. */
KernelWork head_bmm_kernel(const std::string& name, double rows, int heads, int n, int k, DType weight_dtype);

/** @brief A streaming kernel over `rows` x `width` bf16 elements that reads `reads` and writes `writes` such
 *  tensors (RMSNorm: 1/1, SiLU-and-mul: 2/1). Table family `family` (may be empty), dims {hidden: width}. */
KernelWork streaming_kernel(const std::string& name, double rows, int width, double reads, double writes,
                            const std::string& family);

/** @brief The activation quantization before a linear layer with 8-bit weights (vLLM's W8A8 FP8 linears quantize
 *  their bf16 input per token group of 128: one kernel, bf16 in, FP8 + fp32 scales out). Floor family `quant`. */
KernelWork activation_quant_kernel(const std::string& name, double rows, int width);

/** @brief A linear layer as a serving engine launches it: the activation quantization (8-bit weights) then the GEMM,
 *  each tagged with `source` (where vLLM launches it). */
void add_linear(std::vector<KernelWork>& out, const std::string& name, double m, int n, int k, DType weight_dtype,
                std::string_view source);
/** @brief The same linear layer in `f`'s format (its input quantization writes f.quant_out_bytes per element). */
void add_linear(std::vector<KernelWork>& out, const std::string& name, double m, int n, int k, const LinearFormat& f,
                std::string_view source);

/** @brief `w` tagged with the place a serving engine launches it (vLLM file: function) and its floor family. The
 *  source is kept only where cost explanations are on (models/CostExplain): nothing else reads it. */
KernelWork launched_at(KernelWork w, std::string_view source, std::string_view floor_family = {});
/** @brief `base` followed by `note` where cost explanations are on, else "": a kernel's source built only where it is
 *  read. */
std::string source_note(std::string_view base, std::string_view note);
/** @brief `w` tagged as running inside vLLM custom op `split` (GraphSplit). */
KernelWork inside(KernelWork w, GraphSplit split);

} // namespace dbosim::models

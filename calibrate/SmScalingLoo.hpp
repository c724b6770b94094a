/* dbosim — out-of-sample check of SM-scaling models: leave one measured kernel out, fit a model on the other kernels
 * of its family, predict the left-out kernel's speed t(full GPU)/t(S SMs) at every measured S (green contexts).
 * Compares the profile's per-family median curve with two shape-aware candidates (see SmScalingLoo.cpp). */
#pragma once
#include "calibrate/Measurement.hpp"

#include <map>
#include <string>
#include <vector>

namespace dbosim::calib {

/** @brief One GEMM-like kernel measured on green contexts: its shape and its speed at each partial SM count. */
struct SmKernel {
  std::string family;                 ///< scaling family: "gemm", "grouped_gemm", "attention", "memory"
  std::string variant;                ///< raw kernel family: "gemm_bf16", "grouped_gemm_fp8", ...
  std::map<std::string, double> dims; ///< the kernel's parameters without "sms" (n, k, tokens, experts, ...)
  std::map<int, double> speed;        ///< SMs (< full GPU) -> t(full GPU) / t(SMs)
};

/** @brief Full-GPU rates the roofline candidate splits a kernel's time with (measured: the fit's best rates). */
struct SmRates {
  double bf16_flops_per_s = 0;
  double fp8_flops_per_s  = 0;
  double hbm_bytes_per_s  = 0;
};

/** @brief The sm_scaling records grouped per kernel; kernels without a full-GPU point are left out. */
std::vector<SmKernel> sm_scaling_kernels(const std::vector<Measurement>& records, int sm_count);

/** @brief GEMM output tiles of a kernel for a tm x tn CTA tile: groups * ceil(M / tm) * ceil(N / tn), M = tokens
 *  (per expert for grouped GEMMs), N = n, groups = experts (1 for a plain GEMM). */
double gemm_tiles(const SmKernel& k, int tm, int tn);

/** @brief Wave-quantization factor ceil(tiles / sm_count) / ceil(tiles / sms): the speed a kernel whose CTAs each do
 *  one tile keeps on `sms` SMs relative to the full GPU (1 when every tile fits in one wave on both). */
double wave_factor(double tiles, int sms, int sm_count);

/** @brief The share of a kernel's full-GPU roofline time that is compute: tc / (tc + tm), tc = flops / peak of its
 *  dtype, tm = (weights + activations + output) bytes / HBM rate. */
double compute_share(const SmKernel& k, const SmRates& rates);

struct SmLooRow {
  std::string family;
  std::string model;
  int kernels   = 0;
  int points    = 0;
  double median = 0; ///< |predicted - measured| / measured speed
  double mean   = 0;
  double max    = 0;
  std::string worst;                     ///< kernel and SMs of the largest error
  std::vector<double> kernel_mean;       ///< per left-out kernel (family order), its mean error over its SM counts
  std::vector<std::string> kernel_names; ///< the left-out kernels, in the same order
};

/** @brief Per GEMM family (gemm, grouped_gemm), one row per model: "median curve" (the profile's model),
 *  "wave quantization" (tile fitted in-fold) and "roofline blend". */
std::vector<SmLooRow> sm_scaling_loo(const std::vector<SmKernel>& kernels, int sm_count, const SmRates& rates);

/** @brief The comparison as a fixed-width text table; "better on" counts the left-out kernels a candidate predicts
 *  with a lower mean error than the median curve of its family; then each kernel's mean error under each model. */
std::string format_sm_loo_report(const std::vector<SmLooRow>& rows);

} // namespace dbosim::calib

/* dbosim validate — reference cases: published figures (DeepEP, FlashMLA, DeepGEMM; docs/domain.md §7) as data files
 * (YAML files in validate/cases/), each predicted through dbosim's public cost paths:
 *   predictor all_to_all  the D or C op of one MoE layer as a scenario costs it (models::layer_costs: the model from
 *                         the zoo, the parallel layout and backend, the step shape, the profile's network facts or
 *                         `network`, `comm_sms`), metric latency (us) or bandwidth (GB/s = the op's bytes, those
 *                         the benchmark counts, / its duration);
 *   predictor gemm        one (grouped) GEMM kernel (models::gemm_kernel / grouped_gemm_kernel + kernel_time), metric
 *                         us or TFLOPS;
 *   predictor attention   the core-attention kernel of A1 for a zoo model (models::attention_a1_kernels), metric us,
 *                         TFLOPS or GB/s (the kernel's HBM bytes / its duration).
 * Every case names its profile, measured value, unit, tolerance (from the source's own variability, stated in
 * tolerance_basis) and source. */
#pragma once
#include "validate/CaseResult.hpp"

#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief Runs every case of every YAML file in `dir` (sorted by file name, cases in file order) but the e2e group's
 *  e2e*.yaml (validate/E2eCases.hpp). */
std::vector<CaseResult> run_reference_cases(const std::string& dir);

} // namespace dbosim::validate

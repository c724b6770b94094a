/* dbosim — the calibration suite: which kernels, at which shapes, tokens and SM budgets (plain C++).
 * The shapes are the projection and expert shapes of the model zoo (DeepSeek-V3, Kimi-K2, Qwen3-235B-A22B,
 * Qwen3-30B-A3B, Mixtral-8x7B, DeepSeek-V2-Lite). */
#pragma once
#include "calibrate/Measurement.hpp"

#include <map>
#include <string>
#include <vector>

namespace dbosim::calib {

/** @brief How much to measure: quick (a smoke run, < 3 min on an H200) or full (< 15 min). */
enum class SuiteSize { quick, full };

/** @brief A dense projection y[M,n] = x[M,k] W[n,k]^T of some model. */
struct GemmShape {
  int n;
  int k;
  const char* what; ///< which models and projections use it
};

/** @brief An expert GEMM shape with the local expert counts to sweep. */
struct ExpertShape {
  int n;
  int k;
  std::vector<int> experts;
  const char* what;
};

const std::vector<GemmShape>& zoo_gemm_shapes();
const std::vector<ExpertShape>& zoo_expert_shapes();

/** @brief The SM budgets of the green-context partitions (132 = the whole H200). */
const std::vector<int>& partition_sms();

/** @brief Token counts of the per-shape SM tables (16..16384, powers of two but 32). */
const std::vector<int>& sm_table_tokens();

/** @brief SM budgets of the per-shape SM tables: the DBO compute partitions sm_count - 20 and sm_count - 32. */
std::vector<int> sm_table_sms(int sm_count);

/** @brief How the SM-table points are timed (validate/testbed/diag/README.md), a parameter of every point so each
 *  timing's points have keys of their own. `settle_ms` (the default, sm_table_settle_ms) runs the GEMM that long back
 *  to back before the timed back-to-back repeats: the full-GPU point and its partitions each at the clock that a
 *  sustained load of that GEMM on those SMs settles at under the power limit (a running pipeline); the cold-L2 timing
 *  of the other points timed a partition right after its full-GPU point, at a clock the full GPU had just pulled down.
 *  `rest_ms` (sm_table_rest_ms; not yet run on a GPU) idles the GPU that long before a short burst of repeats (about
 *  15 ms, cold L2): the clock regime of the overlap testbed, which idles 20 ms behind its gate before each step. None
 *  of them: the cold-L2 timing (the timing of the tables of calibration runs 1-3, docs/calibration-runs.md). */
constexpr int sm_table_settle_ms = 100;
constexpr int sm_table_rest_ms   = 30;

/** @brief The per-shape SM-table points (family "sm_table", variant gemm_bf16/gemm_fp8): every zoo dense GEMM shape
 *  over sm_table_tokens(), each at the full GPU then at sm_table_sms(); shape outer, so a cut run keeps whole shapes.
 *  Part of the full suite; `dbosim-calibrate-run --only sm_table` runs just these. `timing` is added to every point's
 *  parameters ({"rest_ms", ms}, {"settle_ms", ms} or empty). */
std::vector<MeasureSpec> sm_table_plan(int sm_count, const std::map<std::string, double>& timing = {
                                                         {"settle_ms", sm_table_settle_ms}});

/** @brief Every measurement of the suite, most important first (so a run cut short keeps what matters).
 *  @param sm_count the GPU's SMs (the 132-SM list is scaled down on a smaller GPU). */
std::vector<MeasureSpec> build_plan(SuiteSize size, int sm_count);

/** @brief The fresh-measurement pass taken right after a run: GEMM 4096x4096x7168 BF16 and the copy kernel. */
std::vector<MeasureSpec> build_verify_plan();

/** @brief Tokens per expert in the skewed grouped-GEMM case: E experts, `mean` tokens on average, a Zipf(1)
 *  spread (expert e gets a share proportional to 1/(e+1)); the total is exactly E*mean. */
std::vector<int> skewed_tokens(int experts, int mean);

} // namespace dbosim::calib

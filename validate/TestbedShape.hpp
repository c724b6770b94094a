/* dbosim validate — the overlap testbed's shapes (validate/testbed/shapes.yaml): token counts, GEMM dims of each
 * compute op and the copy kernel's size and CTA count for D and C. */
#pragma once
#include "config/ScheduleTable.hpp"

#include <string>
#include <vector>

namespace dbosim::validate {

struct GemmDims {
  int n = 0;
  int k = 0;
};

struct TestbedShape {
  std::string name;
  int tokens                  = 0; ///< whole step; dbo splits it into two micro-batches of tokens/2
  int layers                  = 0; ///< MoE layers (no dense layers)
  int comm_ctas               = 0; ///< CTAs of the copy kernel (= SMs the comm holds; the partition's comm side)
  double comm_bytes_per_token = 0; ///< bytes D and C each move per token
  int comm_smem_bytes         = 0; ///< dynamic shared memory per copy CTA (file-wide `comm_smem_bytes`, default 0)
  GemmDims a0, a1, mlp, s;
};

struct TestbedShapes {
  std::string gemm_family; ///< the profile table family of the GEMMs ("gemm_bf16")
  std::vector<TestbedShape> shapes;
};

/** @brief Reads a shapes file (strict: unknown keys and out-of-range values are InputErrors). */
TestbedShapes load_testbed_shapes(const std::string& path);

/** @brief The schedule variants each shape runs under: serial, async_combine, dbo (comm stream at default priority,
 *  sharing all SMs), dbo_green (green-context partition), and async_combine_hiprio, dbo_hiprio (comm stream at the
 *  greatest stream priority). The engine has no stream priorities: a variant and its _hiprio twin get one prediction.
 */
struct TestbedVariant {
  std::string name;         ///< "serial", "async_combine", "dbo", "dbo_green", "async_combine_hiprio", "dbo_hiprio"
  sim::ScheduleId schedule; ///< engine schedule
  bool partition          = false;
  bool comm_high_priority = false;
};
const std::vector<TestbedVariant>& testbed_variants();

} // namespace dbosim::validate

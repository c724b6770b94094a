/* dbosim — a StepPlan from given op durations (tests, benchmarks, hand-checked cases): no model, no profile. */
#pragma once
#include "sim/plan/StepPlan.hpp"

#include <string>

namespace dbosim::sim {

/** @brief Durations (µs) of one layer's ops for one micro-batch. s_us < 0: no shared expert. */
struct LayerDurations {
  double a0_us        = 0;
  double a1_us        = 0;
  double d_us         = 0;
  double mlp_us       = 0;
  double s_us         = 0;
  double c_us         = 0;
  double dense_mlp_us = 0; ///< the FFN of the dense layers
  int kernels_per_op  = 1;
};

/** @brief `ubatches` identical micro-batches with durations `d` (partitioned duration = duration); host and GPU
 *  parameters default to a free host and no partition. */
StepPlan synthetic_plan(ScheduleId schedule, int num_layers, int first_k_dense, int ubatches, const LayerDurations& d);

} // namespace dbosim::sim

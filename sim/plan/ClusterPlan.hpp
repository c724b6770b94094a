/* dbosim — one step of every rank of the EP group, as plain data: the ranks' distinct StepPlans (rank classes: ranks
 * with identical op durations replay identically, so one stands for all — an exact shortcut), the rank -> class map
 * and what each rank carries (expert rows, its own dispatch/combine durations). Built by ClusterPlanBuilder. */
#pragma once
#include "sim/plan/StepPlan.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief One rank's load in the step, summed over its micro-batches (one MoE layer's worth). */
struct RankLoad {
  int rank_class     = 0;
  double expert_rows = 0; ///< token copies its experts compute
  double mlp_us      = 0; ///< its routed-expert op, alone on the GPU
  double dispatch_us = 0; ///< its own side of D, alone on the fabric
  double combine_us  = 0; ///< its own side of C
  double own_work_us = 0; ///< mlp + dispatch + combine: what makes a straggler
};

struct ClusterPlan {
  int ep            = 1;
  int gpus_per_node = 8;
  std::vector<StepPlan> classes;  ///< distinct per-rank plans
  std::vector<int> class_rank;    ///< the first rank of each class (its representative)
  std::vector<RankLoad> ranks;    ///< by rank
  std::vector<std::string> notes; ///< routing, placement, symmetry decisions
  int num_classes() const { return static_cast<int>(classes.size()); }
};

} // namespace dbosim::sim

/* dbosim — from a Deployment and a step shape to a ClusterPlan: StepPlanBuilder's plan for the rank shape (DBO rules,
 * DP padding, host and GPU parameters), then, per micro-batch, expert routing over the EP group (models/ExpertRouting)
 * and each rank's MLP (its received rows through the cost model) and dispatch/combine (models/All2AllModel). */
#pragma once
#include "config/Scenario.hpp"
#include "hw/NetworkFacts.hpp"
#include "sim/plan/ClusterPlan.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

namespace dbosim::sim {

/** @brief Builds the plan; InputError (naming the scenario file and key) for an impossible cluster. */
ClusterPlan build_cluster_plan(const Deployment& sc, const models::StepShape& shape, const CostSource& costs,
                               const models::NetworkFacts& net, const PlanOptions& opt = {});

} // namespace dbosim::sim

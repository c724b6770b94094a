/* dbosim — the per-op cost table of one step: one MoE layer, one dense layer, and the serial step total. */
#pragma once
#include "config/Scenario.hpp"
#include "models/OpCost.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace dbosim::cli {

struct CostReport {
  models::StepShape shape;
  models::LayerCosts moe_layer;   ///< empty ops when the model has no MoE layer
  models::LayerCosts dense_layer; ///< empty ops when the model has no dense layer
  models::OpCost step_work;       ///< the step's work outside the layers (embedding, final norm, LM head, sampler)
  double step_serial_us = 0;      ///< every op of every layer back to back on one stream, then the step's work
};

/** @brief Costs of one step of `s` on one rank. */
CostReport build_cost_report(const Scenario& s);

/** @brief "profile: h200 measured YYYY-MM-DD (NVIDIA H200)": the profile's name, kind, date and GPU. */
std::string profile_line(const models::HwProfile& hw);

/** @brief The printed table (µs, GFLOP, MB, bound, method per op). */
std::string format_cost_report(const Scenario& s, const CostReport& r);

/** @brief How op `name` (A0 A1 D MLP S C, or STEP: the work outside the layers) was costed: every kernel with its
 *  family, shape, time and where a serving engine launches it, then one term per line, for each layer kind. */
std::string explain_op(const CostReport& r, const std::string& name);

/** @brief The report as JSON for summary.json. */
nlohmann::ordered_json cost_report_json(const Scenario& s, const CostReport& r);

} // namespace dbosim::cli

/* dbosim — the plan's outputs: points.csv (every point, byte-identical however it was run), report.md and a
 * self-contained report.html (plots inlined as SVG, no external resource). */
#pragma once
#include "plan/PlanAnalysis.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dbosim::plan {

/** @brief What the report says about the model's error: validate's e2e group (whole steps and serving runs against
 *  published deployments), its recorded MAPE (%) if measured, and the cases it rests on: those of the recommended
 *  GPU's generation when the baseline records enough of them (validate/ErrorBand.hpp). */
struct ModelError {
  std::string source; ///< the baseline file read ("" when none)
  std::string group;  ///< "e2e"
  std::optional<double> mape_pct;
  std::vector<std::string> cases;
  std::string generation; ///< the GPU generation the cases are of; empty: every case of the group
  std::string note;       ///< why the band is every case's when the recommended GPU's generation was asked for
};

/** @brief The plots, as inline SVG text. */
struct ReportPlots {
  std::string frontier, itl_vs_ep, ttft_vs_ep, timeline;
  std::string timeline_caption;
};

/** @brief Every point: axis values, hardware, status, headline serving figures and the analysis columns. */
std::string points_csv(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an);

/** @brief The recommended point's launch: its engine's label ("vLLM") and the shell text (plan/LaunchCommand's
 *  format_launch); an empty text: none (no recommendation, or it could not be derived). */
struct PointLaunch {
  std::string engine;
  std::string text;
};

/** `launch`: the recommended point's launch, shown under the recommendation. */
std::string report_markdown(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an,
                            const ModelError& err, const PointLaunch& launch = {});

std::string report_html(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an,
                        const ModelError& err, const ReportPlots& plots, const PointLaunch& launch = {});

} // namespace dbosim::plan

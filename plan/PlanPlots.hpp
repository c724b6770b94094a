/* dbosim — the report's plots, drawn by gnuplot (Debian gnuplot-nox, SVG terminal) from data files it writes under
 * DIR/plots/. Each function returns the SVG text (without its XML prologue, ready to inline in HTML). */
#pragma once
#include "plan/PlanAnalysis.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace dbosim::plan {

/** @brief Runs gnuplot on `script` (in `dir`) and returns the SVG it wrote to `svg`. @throws InternalError. */
std::string run_gnuplot(const std::string& dir, const std::string& name, const std::string& script);

/** @brief tok/s/GPU vs tok/s/user: every point per hardware, those meeting the SLOs filled, the frontier as a line,
 *  the recommendation marked. */
std::string frontier_plot(const std::string& dir, const std::vector<PointResult>& rs, const PlanAnalysis& an);

/** @brief A latency metric (p99_itl_ms, p99_ttft_ms) against EP, one series per hardware × DBO × async combine,
 *  with its SLO (if any) as a dashed line. */
std::string latency_vs_ep_plot(const std::string& dir, const std::string& metric, double slo_ms,
                               const std::vector<PointResult>& rs);

/** @brief One engine step as a profiler view: the compute and comm streams, each op a box coloured by micro-batch,
 *  over the first `layers` layers of the chrome trace `trace`. */
std::string timeline_plot(const std::string& dir, const nlohmann::json& trace, int layers, const std::string& title);

} // namespace dbosim::plan

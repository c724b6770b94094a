/* dbosim validate — one compared figure (predicted vs measured) and the per-group summary: MAPE, failures, the CSV
 * and the regression gate against a recorded baseline. */
#pragma once
#include <map>
#include <string>
#include <vector>

namespace dbosim::validate {

struct CaseResult {
  std::string group;  ///< MAPE is computed per group ("testbed_makespan/dbo", "deepep_ll", ...)
  std::string name;   ///< the case
  std::string metric; ///< what is compared ("makespan", "A1 total", "dispatch latency", ...)
  std::string unit;   ///< "us", "GB/s", "TFLOPS"
  double predicted     = 0;
  double measured      = 0;
  double tolerance_pct = 0; ///< 0: reported, not checked
  std::string source;       ///< public source or measurement provenance
  std::string slice; ///< e2e cases: the engine row and phase ("vllm decode"), whose MAPE is printed too; else empty
  double error_pct() const { return measured != 0 ? 100.0 * (predicted - measured) / measured : 0; }
  bool checked() const { return tolerance_pct > 0; }
  bool pass() const;
};

struct GroupSummary {
  int cases       = 0;
  int checked     = 0;
  int failed      = 0;
  double mape_pct = 0; ///< mean |error %| over the group's cases
};

std::map<std::string, GroupSummary> summarize(const std::vector<CaseResult>& rows);

/** @brief MAPE per group and slice (engine and phase) over the rows that have a slice: reported, not gated. */
std::map<std::string, GroupSummary> summarize_slices(const std::vector<CaseResult>& rows);

/** @brief The printed table (one line per case, then MAPE per group, then per engine and phase). */
std::string format_results(const std::vector<CaseResult>& rows);

/** @brief The CSV (group,name,metric,unit,predicted,measured,error_pct,tolerance_pct,status,source). */
std::string results_csv(const std::vector<CaseResult>& rows);

/** @brief A recorded baseline: MAPE per group and, for the e2e groups, the cases it was recorded over. */
struct Baseline {
  std::map<std::string, double> mape_pct;
  std::map<std::string, std::vector<std::string>> cases;
};

/** @brief Reads `groups: {name: mape_pct, ...}` and the optional `cases: {group: [case, ...]}`. */
Baseline load_baseline_file(const std::string& path);
/** @brief The recorded MAPE per group. */
std::map<std::string, double> load_baseline(const std::string& path);
/** @brief The baseline file: every group's MAPE, and the case names of the e2e groups (names starting "e2e"), which
 *  the uncertainty band cites. */
std::string baseline_yaml(const std::map<std::string, GroupSummary>& groups, const std::vector<CaseResult>& rows);

/** @brief Groups whose MAPE exceeds the baseline by more than `slack_pct` points, or that the baseline lacks; one
 *  message per violation (empty: the gate holds). */
std::vector<std::string> gate_violations(const std::map<std::string, GroupSummary>& now,
                                         const std::map<std::string, double>& baseline, double slack_pct);

} // namespace dbosim::validate

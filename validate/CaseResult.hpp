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
  std::string generation; ///< e2e cases: the GPU generation of the case's profile ("hopper"); else empty
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

/** @brief MAPE per group and GPU generation over the rows that have one: reported, not gated (the baseline records it
 *  for the uncertainty band). */
std::map<std::string, GroupSummary> summarize_generations(const std::vector<CaseResult>& rows);

/** @brief The printed table (one line per case, then MAPE per group, then per engine and phase). */
std::string format_results(const std::vector<CaseResult>& rows);

/** @brief The CSV (group,name,metric,unit,predicted,measured,error_pct,tolerance_pct,status,source). */
std::string results_csv(const std::vector<CaseResult>& rows);

/** @brief One generation's share of an e2e group in a recorded baseline. */
struct GenerationBand {
  double mape_pct = 0;
  std::vector<std::string> cases;
};

/** @brief A recorded baseline: MAPE per group and, for the e2e groups, the cases it was recorded over and the MAPE of
 *  each GPU generation's cases. */
struct Baseline {
  std::map<std::string, double> mape_pct;
  std::map<std::string, std::vector<std::string>> cases;
  std::map<std::string, std::map<std::string, GenerationBand>> generations; ///< group -> generation -> its band
};

/** @brief Reads `groups: {name: mape_pct, ...}`, the optional `cases: {group: [case, ...]}` and the optional
 *  `generations: {group: {generation: {mape_pct, cases: [case, ...]}}}`. */
Baseline load_baseline_file(const std::string& path);
/** @brief The recorded MAPE per group. */
std::map<std::string, double> load_baseline(const std::string& path);
/** @brief The baseline file: every group's MAPE, and the case names of the e2e groups (names starting "e2e"), which
 *  the uncertainty band cites, with each GPU generation's MAPE and cases. */
std::string baseline_yaml(const std::map<std::string, GroupSummary>& groups, const std::vector<CaseResult>& rows);

/** @brief The rows the gate compares with `baseline`: in a group whose recorded case list the baseline holds (the e2e
 *  groups), only the cases it lists, so that a case added since is reported but does not move the gated MAPE until
 *  the baseline is re-recorded; the others are appended to `new_cases`. Other groups' rows are kept whole. */
std::vector<CaseResult> gated_rows(const std::vector<CaseResult>& rows, const Baseline& baseline,
                                   std::vector<std::string>& new_cases);

/** @brief Groups whose MAPE exceeds the baseline by more than `slack_pct` points, or that the baseline lacks; one
 *  message per violation (empty: the gate holds). */
std::vector<std::string> gate_violations(const std::map<std::string, GroupSummary>& now,
                                         const std::map<std::string, double>& baseline, double slack_pct);

} // namespace dbosim::validate

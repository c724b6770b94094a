/* dbosim — one calibration measurement: what is measured (MeasureSpec) and what came out (Measurement).
 * Plain C++ (standard library + nlohmann/json): built both here and on the GPU machine. */
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dbosim::calib {

/** @brief One point of the calibration suite: a kernel family, an optional variant, and its numeric parameters.
 *  Examples: {family "gemm_bf16", params {n: 4096, k: 7168, tokens: 512}};
 *            {family "sm_scaling", variant "gemm_bf16", params {n, k, tokens, sms: 100}}. */
struct MeasureSpec {
  std::string family;
  std::string variant;                  ///< "" when the family needs none
  std::map<std::string, double> params; ///< sorted by name, so the key is canonical

  /** @brief Canonical key, unique in a suite: "family[/variant]/name=value,name=value". */
  std::string key() const;
};

/** @brief The outcome of one MeasureSpec: median duration over repeats (us), spread, extra values. */
struct Measurement {
  MeasureSpec spec;
  std::string status = "ok";               ///< "ok", or "skipped: why" / "error: why" (kept so a resume skips it too)
  double us          = 0;                  ///< median duration of one repeat, microseconds
  double us_p10      = 0;                  ///< 10th percentile of the repeats, microseconds
  double us_p90      = 0;                  ///< 90th percentile of the repeats, microseconds
  int reps           = 0;                  ///< timed repeats behind the median
  std::map<std::string, double> extra;     ///< family-specific values ("gbps", "us_alone", "sm_clock_mhz", ...)
  std::map<std::string, std::string> info; ///< strings (environment record, algorithm names, ...)

  bool ok() const { return status == "ok"; }
};

/** @brief Formats a number the same way everywhere (shortest form that round-trips, integers without ".0"). */
std::string format_number(double v);

nlohmann::json to_json(const Measurement& m);
/** @brief Parses one raw-results line; throws std::runtime_error on a malformed record. */
Measurement measurement_from_json(const nlohmann::json& j);

/** @brief Median, p10 and p90 of samples (sorted copy); fills us, us_p10, us_p90, reps. */
void summarize_samples(Measurement& m, std::vector<double> samples_us);

} // namespace dbosim::calib

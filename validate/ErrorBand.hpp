/* dbosim — the model's uncertainty band: the e2e validate group's recorded MAPE (validate/baseline.yaml), the error
 * of whole steps and serving runs against published deployments, and the cases it rests on. `dbosim run` prints it
 * under the step time and the plan report applies it to the recommendation. Read from the recorded baseline, not
 * recomputed, so the same inputs print the same band. */
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief The validate group whose error is the band. */
inline constexpr const char* band_group = "e2e";

struct ErrorBand {
  std::string source;             ///< the baseline file
  std::string group;              ///< band_group
  double mape_pct = 0;            ///< the group's recorded MAPE (%)
  std::vector<std::string> cases; ///< the cases it was recorded over (empty when the baseline lists none)
};

/** @brief The band from `baseline_file`; nullopt when the file is missing or has no e2e group.
 *  @throws InputError when the file exists but is malformed. */
std::optional<ErrorBand> load_error_band(const std::string& baseline_file);

/** @brief One line: "band ±X% from validate e2e group (N cases: a, b, ...) in FILE", or why there is none. */
std::string band_text(const std::optional<ErrorBand>& band, const std::string& baseline_file);

} // namespace dbosim::validate

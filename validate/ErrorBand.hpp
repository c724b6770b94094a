/* dbosim — the model's uncertainty band: the e2e validate group's recorded MAPE (validate/baseline.yaml), the error
 * of whole steps and serving runs against published deployments, and the cases it rests on. `dbosim run` prints it
 * under the step time and the plan report applies it to the recommendation. A run on a GPU of a generation that the
 * baseline records with enough cases gets that generation's band (Hopper, Blackwell or CDNA cases only); otherwise
 * the whole group's, with a note saying why. Read from the recorded baseline, not recomputed, so the same inputs
 * print the same band. */
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief The validate group whose error is the band. */
inline constexpr const char* band_group = "e2e";

/** @brief A generation's own band needs at least this many of its cases in the baseline; below, the whole group's. */
inline constexpr std::size_t min_generation_cases = 3;

struct ErrorBand {
  std::string source;             ///< the baseline file
  std::string group;              ///< band_group
  double mape_pct = 0;            ///< the recorded MAPE (%) of the cases below
  std::vector<std::string> cases; ///< the cases it was recorded over (empty when the baseline lists none)
  std::string generation;         ///< the GPU generation whose cases these are; empty: every case of the group
  std::string note;               ///< when a generation was asked for and the band is the group's: why
};

/** @brief The band from `baseline_file` for a GPU of `generation` (empty: the whole group's); nullopt when the file is
 *  missing or has no e2e group.
 *  @throws InputError when the file exists but is malformed. */
std::optional<ErrorBand> load_error_band(const std::string& baseline_file, const std::string& generation = "");

/** @brief One line: "band ±X% from validate e2e group (N cases: a, b, ...) in FILE", with the generation's name when
 *  the band is its cases' and the note when it fell back to the group's; or why there is none. */
std::string band_text(const std::optional<ErrorBand>& band, const std::string& baseline_file);

} // namespace dbosim::validate

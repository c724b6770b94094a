/* dbosim — writes a measured hardware profile (hwprofiles/README.md schema) from a fit and the datasheet profile
 * it refines: what was measured replaces the datasheet number, the rest (peaks, links, capacity) is kept with its
 * source. Written with yaml-cpp's emitter, atomically (temp + rename). */
#pragma once
#include "calibrate/ProfileFit.hpp"

#include <string>
#include <vector>

namespace dbosim::calib {

struct WriterOptions {
  std::string base_profile;               ///< path of the datasheet profile (read through config/HwProfileLoader)
  std::string base_recorded;              ///< the base's path as recorded for refit (default: base_profile)
  std::string base_label;                 ///< how the header comment names the base (default: base_profile)
  std::string raw_results;                ///< path of the raw results, as recorded in provenance (relative to the repo)
  std::string verify_note;                ///< optional: what the fresh verification measurement found
  std::vector<std::string> skip_families; ///< table families left out of the profile (they stay in the raw file)
  std::string verify_path;                ///< the verification pass's path as given (recorded for refit)
};

/** @brief The fit inputs a profile records in its provenance (fit_base, raw_results, fit_verify,
 *  fit_skip_families), so that `dbosim-calibrate refit PROFILE` replays the fit that wrote it. */
struct RecordedFit {
  std::string raw, base, base_label, verify;
  std::vector<std::string> skip_families;
};

/** @brief The recorded fit of the profile at `path`; std::runtime_error naming the missing key when it has none. */
RecordedFit recorded_fit(const std::string& path);

/** @brief What `refit` replays: the raw records and the writer options the profile at `path` records, its relative
 *  paths resolved against `root` (the repository) where they are not found from the working directory. */
struct RefitInputs {
  std::vector<Measurement> records;
  WriterOptions options;
};
RefitInputs refit_inputs(const std::string& path, const std::string& root);

/** @brief The profile's YAML text. */
std::string profile_yaml(const FittedProfile& fit, const WriterOptions& options);

/** @brief profile_yaml() written to `path` with temp + rename. */
void write_profile(const FittedProfile& fit, const WriterOptions& options, const std::string& path);

} // namespace dbosim::calib

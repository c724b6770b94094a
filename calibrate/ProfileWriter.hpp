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
  std::string base_label;                 ///< how the header comment names the base (default: base_profile)
  std::string raw_results;                ///< path of the raw results, as recorded in provenance (relative to the repo)
  std::string verify_note;                ///< optional: what the fresh verification measurement found
  std::vector<std::string> skip_families; ///< table families left out of the profile (they stay in the raw file)
};

/** @brief The profile's YAML text. */
std::string profile_yaml(const FittedProfile& fit, const WriterOptions& options);

/** @brief profile_yaml() written to `path` with temp + rename. */
void write_profile(const FittedProfile& fit, const WriterOptions& options, const std::string& path);

} // namespace dbosim::calib

/* dbosim — a derived hardware profile: a GPU that shares a measured GPU's compute die (same SMs, tensor cores and
 * clocks class) but not its memory or links (H100 and H800 from a measured H200), written as a normal profile file
 * with provenance kind `derived` (`dbosim-calibrate derive`; method in hwprofiles/README.md).
 *
 * Kept from the measured parent: the efficiencies (fractions of peak), host costs, SM-scaling curves, per-shape SM
 * tables, interference factors and any section this file does not know (copied verbatim). Taken from the child's
 * facts file: name, gpu, SM count (must equal the parent's), peaks, HBM bandwidth and capacity, NVLink and NIC.
 * Rescaled: every measured table point and the copy-kernel curve, by derive_us() below. The output is a pure
 * function of the two input files (no clock, no environment): re-running it on the same inputs writes the same
 * bytes. */
#pragma once
#include <string>

namespace dbosim::calib {

struct DeriveOptions {
  std::string parent_profile; ///< path of the measured parent profile (read through config/HwProfileLoader)
  std::string parent_label;   ///< how provenance names the parent file (default: parent_profile)
  std::string facts;          ///< path of the child's datasheet facts file (hwprofiles/facts/<name>.yaml)
  std::string facts_label;    ///< how provenance names the facts file (default: facts)
};

/** @brief A child kernel time from the parent's measured time and the kernel's roofline time on both GPUs
 *  (max(flops / (peak x efficiency), bytes / (hbm x memory efficiency)), the parent's efficiencies on both):
 *  the parent's excess over its roofline (launch, tile padding, latency, anything HBM bandwidth does not set) is
 *  kept and the roofline part is replaced, child_us = parent_us - parent_roofline_us + child_roofline_us. A point
 *  faster than the parent's roofline scales by child_roofline_us / parent_roofline_us. A memory-bound point on the
 *  roofline therefore scales by the HBM ratio, and a compute-bound one is unchanged while the child's memory term
 *  stays under its compute term. All in microseconds (or any one time unit); a zero roofline keeps parent_us. */
double derive_us(double parent_us, double parent_roofline_us, double child_roofline_us);

/** @brief The derived profile's YAML text.
 *  @throws InputError on a bad facts file, a parent that is not measured, an SM-count mismatch or a table family
 *  without a work model (calib::table_work_families()). */
std::string derived_profile_yaml(const DeriveOptions& options);

/** @brief derived_profile_yaml() written to `path` with temp + rename. */
void write_derived_profile(const DeriveOptions& options, const std::string& path);

} // namespace dbosim::calib

/* dbosim-calibrate diff — two hardware profiles compared family by family (`dbosim-calibrate diff A.yaml B.yaml`).
 *
 * Every ratio is B / A of the quantity the profile stores: a duration for kernel tables and floors, a relative speed
 * for SM-scaling curves and per-shape SM tables, a bandwidth for the copy-kernel curve, the value itself for scalars
 * (peaks, HBM, links, host costs, efficiencies) and interference factors.
 *
 * Curves are compared where both sides were measured: at the union of the two grids' points that lie inside the
 * range both cover ([max of the first points, min of the last points]), each side read there with the interpolation
 * the simulator uses (models/OpTables: piecewise linear between points). Outside that range one side would be
 * clamped or extrapolated, so a ratio there would compare a model's extension, not two measurements. A table on a
 * shared grid is therefore compared point for point. Tables are matched by family and dims (per-shape SM tables also
 * by SM count); an entry present in only one profile is listed as such, with no ratio. */
#pragma once
#include "hw/HwProfile.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::calib {

/** @brief One family of one section (a scalar, a floor or an interference factor is a family of one entry). */
struct FamilyDiff {
  std::string section; ///< "scalar", "kernel_floor", "interference", "table", "sm_scaling", "sm_table", "comm_kernel"
  std::string family;  ///< "hbm_bandwidth", "gemm_bf16", "grouped_gemm", ...
  int common_entries  = 0; ///< entries (tables, curves, values) in both profiles
  int points          = 0; ///< points compared over those entries
  double median_ratio = 0; ///< B / A over the points (0 when there are none)
  double min_ratio    = 0;
  double max_ratio    = 0;
  double worst_ratio  = 0;   ///< the point farthest from 1 (largest |log ratio|)
  std::string worst_at;      ///< where it is: "gemm_bf16[k=7168,n=4096] @ 4096 tokens"
  bool single_value = false; ///< a scalar, floor or factor: value_a and value_b hold it
  double value_a    = 0;
  double value_b    = 0;
  std::vector<std::string> only_a; ///< entries only in A
  std::vector<std::string> only_b; ///< entries only in B
  std::vector<std::string> notes;  ///< e.g. a retile flag that differs, curves with no common range
};

/** @brief Every family of every section present in either profile, in section order (scalars, kernel floors,
 *  interference, tables, SM-scaling curves, per-shape SM tables, the copy-kernel curve), families sorted. */
std::vector<FamilyDiff> diff_profiles(const models::HwProfile& a, const models::HwProfile& b);

/** @brief The family rows as an aligned table, only-in-one-side entries and notes under their row. */
std::string family_diff_text(const std::vector<FamilyDiff>& families);

/** @brief The family rows for --json: ratios only where points were compared, values for single-value rows. */
nlohmann::ordered_json family_diff_json(const std::vector<FamilyDiff>& families);

} // namespace dbosim::calib

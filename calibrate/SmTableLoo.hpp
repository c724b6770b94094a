/* dbosim — out-of-sample check of the per-shape SM tables: leave one token count out of a table, predict its speed
 * from the table's other points (models::speed_at_tokens: linear between the neighbours, clamped to the nearest
 * point at either end), and compare with the family median curve (the profile's sm_scaling.gemm, fitted on other
 * kernels) at the same SM count. */
#pragma once
#include "calibrate/ProfileFit.hpp"

#include <map>
#include <string>
#include <vector>

namespace dbosim::calib {

struct SmTableLooRow {
  int sms = 0;
  std::string model; ///< "per-shape table" or "median curve"
  int tables    = 0;
  int points    = 0;
  double median = 0; ///< |predicted - measured| / measured speed
  double mean   = 0;
  double max    = 0;
  int better    = 0; ///< per-shape table row: points it predicts with a lower error than the median curve
  std::string worst;
};

/** @brief Two rows per SM count with tables (per-shape table, median curve); tables with fewer than 3 points and SM
 *  counts the family curve lacks (sm_scaling["gemm"]) are left out. */
std::vector<SmTableLooRow> sm_table_loo(const std::vector<FitSmTable>& tables,
                                        const std::map<std::string, FitCurve>& sm_scaling);

std::string format_sm_table_loo_report(const std::vector<SmTableLooRow>& rows);

} // namespace dbosim::calib

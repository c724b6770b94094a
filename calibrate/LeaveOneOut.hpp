/* dbosim — a calibration's accuracy card: for every interior point of every table, the interpolation error when
 * that point is left out of the table (|predicted - measured| / measured), summarised per kernel family. */
#pragma once
#include "calibrate/Interp.hpp"
#include "calibrate/ProfileFit.hpp"

#include <string>
#include <vector>

namespace dbosim::calib {

struct LooStats {
  std::string family;
  int points    = 0; ///< interior points left out, one at a time
  double median = 0; ///< relative error
  double p90    = 0;
  double max    = 0;
  std::string worst; ///< the table and tokens of the largest error
};

/** @brief Per family (in table order of first appearance), for one interpolation scheme. */
std::vector<LooStats> leave_one_out(const std::vector<FitTable>& tables, InterpKind kind);

/** @brief The card as a fixed-width text table (both schemes). */
std::string format_loo_report(const std::vector<FitTable>& tables);

} // namespace dbosim::calib

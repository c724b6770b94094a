/* dbosim — order statistics shared by the calibration fits and their accuracy cards. */
#pragma once
#include <vector>

namespace dbosim::calib {

/** @brief Linear-interpolated quantile q in [0, 1] of the samples (sorted copy); 0 when there are none. */
double quantile(std::vector<double> v, double q);

/** @brief quantile(v, 0.5): the middle sample, or the mean of the two middle ones. */
double median(std::vector<double> v);

} // namespace dbosim::calib

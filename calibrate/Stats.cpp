#include "calibrate/Stats.hpp"

#include <algorithm>
#include <cmath>

namespace dbosim::calib {

double quantile(std::vector<double> v, double q)
{
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  double pos  = q * static_cast<double>(v.size() - 1);
  size_t lo   = static_cast<size_t>(std::floor(pos));
  size_t hi   = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] * (1 - frac) + v[hi] * frac;
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

} // namespace dbosim::calib

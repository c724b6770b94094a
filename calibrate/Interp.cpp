#include "calibrate/Interp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dbosim::calib {

double interpolate(const std::vector<double>& x, const std::vector<double>& y, double xq, InterpKind kind)
{
  if (x.size() < 2 || x.size() != y.size())
    throw std::invalid_argument("interpolate: needs at least two points and as many y as x");
  auto it  = std::upper_bound(x.begin(), x.end(), xq);
  size_t i = it == x.begin() ? 0 : std::min<size_t>(static_cast<size_t>(it - x.begin()) - 1, x.size() - 2);
  if (kind == InterpKind::linear) {
    double t = (xq - x[i]) / (x[i + 1] - x[i]);
    return y[i] + t * (y[i + 1] - y[i]);
  }
  double t = (std::log(xq) - std::log(x[i])) / (std::log(x[i + 1]) - std::log(x[i]));
  return std::exp(std::log(y[i]) + t * (std::log(y[i + 1]) - std::log(y[i])));
}

const char* interp_name(InterpKind kind) { return kind == InterpKind::linear ? "linear" : "log-log"; }

} // namespace dbosim::calib

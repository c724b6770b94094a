#include "serving/DetRng.hpp"

#include <cmath>
#include <numbers>

namespace dbosim::serving {

double DetRng::uniform01() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }

long DetRng::uniform_int(long lo, long hi)
{
  if (hi <= lo)
    return lo;
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<long>(static_cast<std::uint64_t>(uniform01() * static_cast<double>(span)) % span);
}

double DetRng::exponential(double mean) { return -mean * std::log1p(-uniform01()); }

double DetRng::normal()
{
  const double u1 = 1.0 - uniform01(); // (0, 1]: log is finite
  const double u2 = uniform01();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double DetRng::gamma(double shape, double scale)
{
  if (shape < 1.0) {
    const double boost = std::pow(1.0 - uniform01(), 1.0 / shape);
    return gamma(shape + 1.0, scale) * boost;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = normal();
    double v = 1.0 + c * x;
    if (v <= 0)
      continue;
    v              = v * v * v;
    const double u = 1.0 - uniform01();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v))
      return d * v * scale;
  }
}

} // namespace dbosim::serving

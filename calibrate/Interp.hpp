/* dbosim — interpolation on a measured table (plain C++): piecewise linear in (tokens, us), and piecewise linear in
 * (log tokens, log us). Outside the measured range both extend the end segment. */
#pragma once
#include <vector>

namespace dbosim::calib {

enum class InterpKind { linear, loglog };

/** @brief y(xq) from points (x strictly increasing, at least 2 points; y > 0 for loglog). */
double interpolate(const std::vector<double>& x, const std::vector<double>& y, double xq, InterpKind kind);

const char* interp_name(InterpKind kind);

} // namespace dbosim::calib

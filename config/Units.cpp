#include "config/Units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

namespace dbosim {
namespace {
using UnitTable = std::vector<std::pair<const char*, double>>;

const UnitTable& table_for(UnitKind kind)
{
  static const UnitTable time{{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  static const UnitTable bandwidth{{"Bps", 1.0},      {"kBps", 1e3},     {"KBps", 1e3},     {"MBps", 1e6},
                                   {"GBps", 1e9},     {"TBps", 1e12},    {"bps", 0.125},    {"kbps", 1e3 / 8},
                                   {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8}};
  static const UnitTable flops{{"f", 1.0}, {"kf", 1e3}, {"Mf", 1e6}, {"Gf", 1e9}, {"Tf", 1e12}, {"Pf", 1e15}};
  static const UnitTable bytes{
      {"B", 1.0},   {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
      {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  switch (kind) {
  case UnitKind::time:
    return time;
  case UnitKind::bandwidth:
    return bandwidth;
  case UnitKind::flops:
    return flops;
  case UnitKind::bytes:
    return bytes;
  }
  throw std::logic_error("unknown UnitKind");
}
} // namespace

std::string unit_names(UnitKind kind)
{
  std::string out;
  for (const auto& [name, scale] : table_for(kind)) {
    (void)scale;
    if (!out.empty())
      out += ", ";
    out += name;
  }
  return out;
}

double parse_quantity(const std::string& text, UnitKind kind)
{
  const char* begin = text.c_str();
  char* end         = nullptr;
  double value      = std::strtod(begin, &end);
  if (end == begin)
    throw std::invalid_argument("'" + text + "' does not start with a number");
  if (!std::isfinite(value))
    throw std::invalid_argument("'" + text + "' is not a finite number");
  std::string unit(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
    unit.erase(unit.begin());
  for (const auto& [name, scale] : table_for(kind))
    if (unit == name)
      return value * scale;
  throw std::invalid_argument("'" + text + "' has unknown unit '" + unit + "' (units: " + unit_names(kind) + ")");
}

} // namespace dbosim

#include "models/OpTables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace dbosim::models {
namespace {
void check_curve(const Curve& c, const char* what)
{
  if (c.x.empty() || c.x.size() != c.y.size())
    throw std::invalid_argument(fmt::format("{} curve is empty or its x and y differ in length", what));
  for (size_t i = 1; i < c.x.size(); ++i)
    if (!(c.x[i] > c.x[i - 1]))
      throw std::invalid_argument(fmt::format("{} curve x values are not strictly increasing", what));
}

/** Piecewise-linear value inside [x0, xn]; the caller handles the outside. */
double inside(const Curve& c, double x, bool* exact)
{
  for (size_t i = 0; i < c.x.size(); ++i) {
    if (x == c.x[i]) {
      *exact = true;
      return c.y[i];
    }
    if (i + 1 < c.x.size() && x < c.x[i + 1]) {
      *exact         = false;
      const double t = (x - c.x[i]) / (c.x[i + 1] - c.x[i]);
      return c.y[i] + t * (c.y[i + 1] - c.y[i]);
    }
  }
  *exact = true;
  return c.y.back();
}
} // namespace

void index_tables(HwProfile& hw)
{
  auto index   = std::make_shared<TableIndex>();
  index->count = hw.tables.size();
  for (std::size_t i = 0; i < hw.tables.size(); ++i) {
    index->positions[hw.tables[i].family].push_back(i);
    index->first_by_dims[hw.tables[i].family].emplace(hw.tables[i].dims, i); // the first one stays
  }
  hw.table_index = std::move(index);
}

const OpTable* find_table(const HwProfile& hw, const std::string& family, const std::map<std::string, int>& dims)
{
  if (hw.table_index && hw.table_index->count == hw.tables.size()) {
    const auto of = hw.table_index->first_by_dims.find(family);
    if (of == hw.table_index->first_by_dims.end())
      return nullptr;
    const auto at = of->second.find(dims);
    return at == of->second.end() ? nullptr : &hw.tables[at->second];
  }
  const OpTable* found = nullptr;
  for_each_table_of(hw, family, [&](const OpTable& t) {
    if (t.dims == dims)
      found = &t;
    return found != nullptr;
  });
  return found;
}

std::string table_lookup_name(TableLookup how)
{
  switch (how) {
  case TableLookup::exact:
    return "exact point";
  case TableLookup::interpolated:
    return "linear between points";
  case TableLookup::clamped:
    return "clamped to first point";
  case TableLookup::extrapolated:
    return "throughput of last point";
  }
  return "?";
}

double table_us(const Curve& curve, double tokens, TableLookup* how)
{
  check_curve(curve, "table");
  if (!(tokens >= 0))
    throw std::invalid_argument(fmt::format("table lookup at negative tokens {}", tokens));
  TableLookup h = TableLookup::exact;
  double us     = 0;
  if (tokens < curve.x.front()) {
    h  = TableLookup::clamped;
    us = curve.y.front();
  } else if (tokens > curve.x.back()) {
    h  = TableLookup::extrapolated;
    us = curve.y.back() * tokens / curve.x.back();
  } else {
    bool exact = false;
    us         = inside(curve, tokens, &exact);
    h          = exact ? TableLookup::exact : TableLookup::interpolated;
  }
  if (how)
    *how = h;
  return us;
}

double speed_at_sms(const Curve& curve, double sms)
{
  check_curve(curve, "SM-scaling");
  double speed = 0;
  if (sms < curve.x.front()) {
    speed = curve.y.front() * sms / curve.x.front();
  } else if (sms > curve.x.back()) {
    speed = curve.y.back();
  } else {
    bool exact = false;
    speed      = inside(curve, sms, &exact);
  }
  if (!(speed > 0))
    throw std::invalid_argument(fmt::format("SM-scaling curve gives speed {} at {} SMs (must be > 0)", speed, sms));
  return speed;
}

const SmTable* find_sm_table(const HwProfile& hw, const std::string& family, const std::map<std::string, int>& dims,
                             int sms)
{
  for (const auto& t : hw.sm_tables)
    if (t.sms == sms && t.family == family && t.dims == dims)
      return &t;
  return nullptr;
}

double speed_at_tokens(const Curve& curve, double tokens)
{
  check_curve(curve, "SM-table");
  bool exact         = false;
  const double at    = std::clamp(tokens, curve.x.front(), curve.x.back());
  const double speed = inside(curve, at, &exact);
  if (!(speed > 0))
    throw std::invalid_argument(fmt::format("SM table gives speed {} at {} tokens (must be > 0)", speed, tokens));
  return speed;
}

std::string table_key(const std::string& family, const std::map<std::string, int>& dims)
{
  std::string out = family + "[";
  bool first      = true;
  for (const auto& [k, v] : dims) {
    out += fmt::format("{}{}={}", first ? "" : ",", k, v);
    first = false;
  }
  return out + "]";
}

} // namespace dbosim::models

#include "calibrate/LeaveOneOut.hpp"
#include "calibrate/Stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace dbosim::calib {

std::vector<LooStats> leave_one_out(const std::vector<FitTable>& tables, InterpKind kind)
{
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, LooStats> stats;
  for (const auto& t : tables) {
    if (!errors.count(t.family))
      order.push_back(t.family);
    auto& e = errors[t.family];
    for (size_t i = 1; i + 1 < t.tokens.size(); ++i) {
      std::vector<double> x, y;
      for (size_t j = 0; j < t.tokens.size(); ++j)
        if (j != i) {
          x.push_back(t.tokens[j]);
          y.push_back(t.us[j]);
        }
      double pred = interpolate(x, y, t.tokens[i], kind);
      double err  = std::fabs(pred - t.us[i]) / t.us[i];
      e.push_back(err);
      auto& s = stats[t.family];
      if (err >= s.max) {
        s.max   = err;
        s.worst = "";
        for (const auto& [k, v] : t.dims)
          s.worst += k + "=" + std::to_string(v) + " ";
        s.worst += "tokens=" + std::to_string(static_cast<long>(t.tokens[i]));
      }
    }
  }
  std::vector<LooStats> out;
  for (const auto& f : order) {
    LooStats s = stats[f];
    s.family   = f;
    s.points   = static_cast<int>(errors[f].size());
    s.median   = quantile(errors[f], 0.5);
    s.p90      = quantile(errors[f], 0.9);
    out.push_back(s);
  }
  return out;
}

std::string format_loo_report(const std::vector<FitTable>& tables)
{
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-26s %6s | %-22s | %-22s | %s\n", "family", "points", "linear: median / p90",
                "log-log: median / p90", "worst (linear)");
  out += line;
  auto lin = leave_one_out(tables, InterpKind::linear);
  auto log = leave_one_out(tables, InterpKind::loglog);
  for (size_t i = 0; i < lin.size(); ++i) {
    std::snprintf(line, sizeof line, "%-26s %6d | %8.1f%% / %7.1f%% | %8.1f%% / %7.1f%% | %.1f%% at %s\n",
                  lin[i].family.c_str(), lin[i].points, 100 * lin[i].median, 100 * lin[i].p90, 100 * log[i].median,
                  100 * log[i].p90, 100 * lin[i].max, lin[i].worst.c_str());
    out += line;
  }
  return out;
}

} // namespace dbosim::calib

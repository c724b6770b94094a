#include "calibrate/SmTableLoo.hpp"
#include "calibrate/Stats.hpp"
#include "models/OpTables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dbosim::calib {
namespace {

struct Errors {
  std::vector<double> e;
  double worst = -1;
  std::string worst_at;
  void add(double err, const std::string& at)
  {
    e.push_back(err);
    if (err > worst) {
      worst    = err;
      worst_at = at;
    }
  }
};

SmTableLooRow summarize(int sms, const char* model, int tables, const Errors& err)
{
  SmTableLooRow r;
  r.sms    = sms;
  r.model  = model;
  r.tables = tables;
  r.points = static_cast<int>(err.e.size());
  r.median = median(err.e);
  r.mean   = err.e.empty() ? 0 : std::accumulate(err.e.begin(), err.e.end(), 0.0) / static_cast<double>(err.e.size());
  r.max    = err.e.empty() ? 0 : *std::max_element(err.e.begin(), err.e.end());
  r.worst  = err.worst_at;
  return r;
}

} // namespace

std::vector<SmTableLooRow> sm_table_loo(const std::vector<FitSmTable>& tables,
                                        const std::map<std::string, FitCurve>& sm_scaling)
{
  auto fam = sm_scaling.find("gemm");
  if (fam == sm_scaling.end() || fam->second.x.empty())
    return {};
  const models::Curve family_curve{fam->second.x, fam->second.y, ""};
  std::map<int, std::vector<const FitSmTable*>> by_sms;
  for (const auto& t : tables)
    if (t.tokens.size() >= 3 && std::find(family_curve.x.begin(), family_curve.x.end(), t.sms) != family_curve.x.end())
      by_sms[t.sms].push_back(&t);
  std::vector<SmTableLooRow> rows;
  for (const auto& [sms, list] : by_sms) {
    Errors table_err, curve_err;
    int better         = 0;
    const double curve = models::speed_at_sms(family_curve, sms);
    for (const FitSmTable* t : list)
      for (size_t i = 0; i < t->tokens.size(); ++i) {
        models::Curve rest;
        for (size_t j = 0; j < t->tokens.size(); ++j)
          if (j != i) {
            rest.x.push_back(t->tokens[j]);
            rest.y.push_back(t->speed[j]);
          }
        const double measured = t->speed[i];
        const double e_table  = std::abs(models::speed_at_tokens(rest, t->tokens[i]) - measured) / measured;
        const double e_curve  = std::abs(curve - measured) / measured;
        const std::string at =
            fmt::format("{}[n={},k={}]@{}", t->family, t->dims.at("n"), t->dims.at("k"), format_number(t->tokens[i]));
        table_err.add(e_table, at);
        curve_err.add(e_curve, at);
        better += e_table < e_curve;
      }
    const int n = static_cast<int>(list.size());
    rows.push_back(summarize(sms, "per-shape table", n, table_err));
    rows.back().better = better;
    rows.push_back(summarize(sms, "median curve", n, curve_err));
    rows.back().better = static_cast<int>(curve_err.e.size()) - better;
  }
  return rows;
}

std::string format_sm_table_loo_report(const std::vector<SmTableLooRow>& rows)
{
  std::string s = fmt::format("  {:>5}  {:<17}{:>7}{:>8}{:>9}{:>8}{:>8}{:>11}  worst\n", "SMs", "model", "tables",
                              "points", "median", "mean", "max", "better on");
  for (const auto& r : rows)
    s += fmt::format("  {:>5}  {:<17}{:>7}{:>8}{:>8.1f}%{:>7.1f}%{:>7.1f}%{:>11}  {}\n", r.sms, r.model, r.tables,
                     r.points, 100 * r.median, 100 * r.mean, 100 * r.max, fmt::format("{} of {}", r.better, r.points),
                     r.worst);
  return s;
}

} // namespace dbosim::calib

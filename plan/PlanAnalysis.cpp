#include "plan/PlanAnalysis.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace dbosim::plan {

double metric(const PointResult& r, const std::string& key)
{
  if (!r.serving.is_object() || !r.serving.contains(key) || !r.serving[key].is_number())
    return std::numeric_limits<double>::quiet_NaN();
  return r.serving[key].get<double>();
}

namespace {

/** The twin of point i with `key` set to "false" and every other key equal, if the plan has one. */
std::optional<std::size_t> twin_off(const std::vector<PointResult>& rs, std::size_t i, const std::string& key)
{
  const PlanPoint& p = rs[i].point;
  if (p.value(key) != "true")
    return std::nullopt;
  for (std::size_t j = 0; j < rs.size(); ++j) {
    const PlanPoint& q = rs[j].point;
    bool same          = q.value(key) == "false";
    for (std::size_t k = 0; same && k < p.keys.size(); ++k)
      same = p.keys[k] == key || p.values[k] == q.values[k];
    if (same)
      return j;
  }
  return std::nullopt;
}

} // namespace

PlanAnalysis analyse(const PlanSpec& spec, const std::vector<PointResult>& rs)
{
  PlanAnalysis out;
  out.points.resize(rs.size());
  for (std::size_t i = 0; i < rs.size(); ++i) {
    PointAnalysis& a = out.points[i];
    a.ok             = rs[i].status == "ok";
    if (!a.ok)
      continue;
    a.slo_ok = true;
    for (const Slo& slo : spec.slos) {
      const double v = metric(rs[i], slo.metric);
      a.slo_margin.push_back(std::isfinite(v) ? 1.0 - v / slo.max_ms : -1.0);
      a.slo_ok = a.slo_ok && std::isfinite(v) && v <= slo.max_ms;
    }
    a.throughput          = metric(rs[i], spec.demand_metric);
    a.gpus                = static_cast<int>(metric(rs[i], "gpus"));
    const double out_tput = metric(rs[i], "output_throughput");
    if (a.throughput > 0 && a.gpus > 0) {
      a.replicas        = static_cast<int>(std::ceil(spec.demand / a.throughput - 1e-9));
      a.gpus_for_demand = a.replicas * a.gpus;
      a.capacity_margin = a.replicas * a.throughput / spec.demand - 1.0;
    }
    if (out_tput > 0)
      a.gpu_hours_per_mtok = a.gpus * 1e6 / out_tput / 3600.0;
  }
  for (std::size_t i = 0; i < rs.size(); ++i) {
    PointAnalysis& a = out.points[i];
    if (!a.ok)
      continue;
    const double gx = metric(rs[i], "output_throughput_per_gpu"), ux = metric(rs[i], "output_throughput_per_user");
    a.pareto = true;
    for (std::size_t j = 0; j < rs.size() && a.pareto; ++j) {
      if (j == i || !out.points[j].ok || rs[j].hardware != rs[i].hardware)
        continue;
      const double gy = metric(rs[j], "output_throughput_per_gpu"), uy = metric(rs[j], "output_throughput_per_user");
      if (gy >= gx && uy >= ux && (gy > gx || uy > ux))
        a.pareto = false;
    }
    const double g = metric(rs[i], "output_throughput_per_gpu");
    if (auto j = twin_off(rs, i, "overlap.enable_dbo"); j && out.points[*j].ok)
      a.dbo_gain = g / metric(rs[*j], "output_throughput_per_gpu") - 1.0;
    if (auto j = twin_off(rs, i, "overlap.async_combine"); j && out.points[*j].ok)
      a.async_gain = g / metric(rs[*j], "output_throughput_per_gpu") - 1.0;
  }
  auto better = [&](std::size_t i, std::size_t j) { // fewest GPUs, then fewest GPU-hours, then point order
    const PointAnalysis &a = out.points[i], &b = out.points[j];
    if (a.gpus_for_demand != b.gpus_for_demand)
      return a.gpus_for_demand < b.gpus_for_demand;
    if (a.gpu_hours_per_mtok != b.gpu_hours_per_mtok)
      return a.gpu_hours_per_mtok < b.gpu_hours_per_mtok;
    return i < j;
  };
  for (std::size_t i = 0; i < rs.size(); ++i) {
    if (!out.points[i].slo_ok || out.points[i].gpus_for_demand <= 0)
      continue;
    auto it = out.best_per_hw.find(rs[i].hardware);
    if (it == out.best_per_hw.end() || better(i, it->second))
      out.best_per_hw[rs[i].hardware] = i;
    if (!out.recommended || better(i, *out.recommended))
      out.recommended = i;
  }
  return out;
}

} // namespace dbosim::plan

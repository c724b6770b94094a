#include "models/ExpertImbalance.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace dbosim::models {

std::string expert_load_model_name(ExpertLoadModel m)
{
  switch (m) {
  case ExpertLoadModel::ideal:
    return "ideal";
  case ExpertLoadModel::eplb_residual:
    return "eplb_residual";
  case ExpertLoadModel::no_eplb:
    return "no_eplb";
  }
  return "unknown";
}

std::string expert_load_source_of(ExpertLoadModel m)
{
  switch (m) {
  case ExpertLoadModel::ideal:
    return "balanced (expected-value) routing";
  case ExpertLoadModel::eplb_residual:
    return expert_load_source;
  case ExpertLoadModel::no_eplb:
    return no_eplb_load_source;
  }
  return "unknown";
}

namespace {

double integrate_expected_max(int n)
{
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx; the integrand is negligible outside [-12, 12] for any n a
  // cluster has. Simpson's rule on 600 intervals (h = 0.04: within 1e-14 of 4800 intervals for n = 2..256).
  constexpr double lo = -12.0, hi = 12.0;
  constexpr int steps       = 600;
  const double h            = (hi - lo) / steps;
  const double inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * std::acos(-1.0));
  auto integrand            = [&](double x) {
    const double phi = inv_sqrt_2pi * std::exp(-0.5 * x * x);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    return x * n * phi * std::pow(cdf, n - 1);
  };
  double sum = integrand(lo) + integrand(hi);
  for (int i = 1; i < steps; ++i)
    sum += (i % 2 == 1 ? 4.0 : 2.0) * integrand(lo + i * h);
  return sum * h / 3.0;
}

} // namespace

double expected_max_std_normal(int n)
{
  if (n <= 1)
    return 0;
  // A pure function of n, integrated once per n and thread: a sweep asks it for the same few EP sizes at every point.
  thread_local std::map<int, double> integrated;
  const auto [it, fresh] = integrated.try_emplace(n, 0.0);
  if (fresh)
    it->second = integrate_expected_max(n);
  return it->second;
}

double systematic_rel_std(const ExpertLoadFigure& f)
{
  const double rel   = f.std_copies_per_rank / f.mean_copies_per_rank;
  const double noise = (1.0 - 1.0 / f.ep) / f.mean_copies_per_rank;
  return std::sqrt(std::max(0.0, rel * rel - noise));
}

double systematic_rel_std_from_max(const ExpertLoadFigure& f)
{
  const double rel   = f.imbalance_ratio / expected_max_std_normal(f.ep);
  const double noise = (1.0 - 1.0 / f.ep) / f.mean_copies_per_rank;
  return std::sqrt(std::max(0.0, rel * rel - noise));
}

double hot_rank_load(ExpertLoadModel m, int ep, double copies_per_rank, double slots_per_rank)
{
  if (m == ExpertLoadModel::ideal || ep <= 1 || !(copies_per_rank > 0) || !(slots_per_rank > 0))
    return 1.0;
  const ExpertLoadFigure& none = trtllm_r1_no_eplb_ep32;
  const double sys             = m == ExpertLoadModel::eplb_residual
                                     ? systematic_rel_std(trtllm_r1_eplb_ep32)
                                     : systematic_rel_std_from_max(none) * std::sqrt(none.slots_per_rank / slots_per_rank);
  const double sigma           = std::sqrt(sys * sys + (1.0 - 1.0 / ep) / copies_per_rank);
  return std::min(static_cast<double>(ep), 1.0 + sigma * expected_max_std_normal(ep));
}

} // namespace dbosim::models

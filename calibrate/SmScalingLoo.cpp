/* The candidates, each fitted only on the kernels it does not predict:
 *  - median curve: speed(S) = median over the family's kernels (what ProfileFit writes to the profile).
 *  - wave quantization: a kernel whose CTAs each compute one output tile takes ceil(tiles / S) waves, so
 *    speed_k(S) = W_k(S) * g(S), W = wave_factor, g(S) = median over the training kernels of speed_j(S) / W_j(S) (what
 *    the waves do not explain: the partition's layout, the heuristic's choices). The CTA tile (tm x tn) is fitted:
 *    among the Hopper cuBLASLt tile sizes 64/128/256 x 64/128/256, the one with the least median error in an inner
 *    leave-one-out over the training kernels.
 *  - roofline blend: a kernel's full-GPU time splits into compute (share f = compute_share) and memory; the memory
 *    part scales like the "memory" family's median curve gm(S), the compute part like a curve gc(S) fitted on the
 *    training kernels (median of f_j / (1/speed_j - (1 - f_j)/gm), kernels with f_j >= 0.05), so
 *    1/speed_k = f_k/gc + (1 - f_k)/gm. */
#include "calibrate/SmScalingLoo.hpp"
#include "calibrate/ProfileFit.hpp"
#include "calibrate/Stats.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>

namespace dbosim::calib {
namespace {

using Speeds    = std::map<int, double>;
using Train     = std::vector<const SmKernel*>;
using Predictor = std::function<Speeds(const Train&, const SmKernel&)>;

double dim(const SmKernel& k, const char* name, double fallback)
{
  auto it = k.dims.find(name);
  return it == k.dims.end() ? fallback : it->second;
}

std::string kernel_name(const SmKernel& k)
{
  std::string s;
  for (const auto& [name, v] : k.dims)
    s += (s.empty() ? "" : " ") + name + "=" + format_number(v);
  return k.variant + "{" + s + "}";
}

/** speed(S) = scale_k(S) * median_j(speed_j(S) / scale_j(S)) over the training kernels measured at S. */
Speeds scaled_median(const Train& train, const SmKernel& k, const std::function<double(const SmKernel&, int)>& scale)
{
  Speeds out;
  for (const auto& [sms, measured] : k.speed) {
    std::vector<double> v;
    for (const SmKernel* j : train)
      if (auto it = j->speed.find(sms); it != j->speed.end())
        v.push_back(it->second / scale(*j, sms));
    if (!v.empty())
      out[sms] = scale(k, sms) * median(v);
  }
  return out;
}

std::vector<double> errors_of(const Speeds& predicted, const SmKernel& k)
{
  std::vector<double> e;
  for (const auto& [sms, p] : predicted)
    e.push_back(std::abs(p - k.speed.at(sms)) / k.speed.at(sms));
  return e;
}

Train without_kernel(const Train& all, const SmKernel* left_out)
{
  Train t;
  for (const SmKernel* j : all)
    if (j != left_out)
      t.push_back(j);
  return t;
}

Predictor wave_model(int sm_count)
{
  return [sm_count](const Train& train, const SmKernel& k) {
    static const int sizes[] = {64, 128, 256};
    auto predict_with        = [sm_count](int tm, int tn, const Train& t, const SmKernel& kk) {
      return scaled_median(
                 t, kk, [=](const SmKernel& j, int sms) { return wave_factor(gemm_tiles(j, tm, tn), sms, sm_count); });
    };
    double best_err = INFINITY;
    int best_tm = 128, best_tn = 128;
    for (int tm : sizes)
      for (int tn : sizes) {
        std::vector<double> e;
        for (const SmKernel* j : train) {
          auto p  = predict_with(tm, tn, without_kernel(train, j), *j);
          auto ej = errors_of(p, *j);
          e.insert(e.end(), ej.begin(), ej.end());
        }
        const double m = median(e);
        if (!e.empty() && m < best_err) {
          best_err = m;
          best_tm  = tm;
          best_tn  = tn;
        }
      }
    return predict_with(best_tm, best_tn, train, k);
  };
}

Predictor blend_model(const Speeds& memory_curve, const SmRates& rates)
{
  return [memory_curve, rates](const Train& train, const SmKernel& k) {
    Speeds out;
    const double fk = compute_share(k, rates);
    for (const auto& [sms, measured] : k.speed) {
      auto gm_it = memory_curve.find(sms);
      if (gm_it == memory_curve.end())
        continue;
      const double gm = gm_it->second;
      std::vector<double> gc;
      for (const SmKernel* j : train) {
        auto it         = j->speed.find(sms);
        const double fj = compute_share(*j, rates);
        if (it == j->speed.end() || fj < 0.05)
          continue;
        const double denom = 1 / it->second - (1 - fj) / gm;
        if (denom > 0)
          gc.push_back(fj / denom);
      }
      out[sms] = gc.empty() ? gm : 1 / (fk / median(gc) + (1 - fk) / gm);
    }
    return out;
  };
}

SmLooRow evaluate(const std::string& family, const std::string& model, const Train& kernels, const Predictor& p)
{
  SmLooRow row;
  row.family = family;
  row.model  = model;
  std::vector<double> all;
  double worst = -1;
  for (const SmKernel* k : kernels) {
    const Speeds predicted = p(without_kernel(kernels, k), *k);
    double sum             = 0;
    for (const auto& [sms, v] : predicted) {
      const double e = std::abs(v - k->speed.at(sms)) / k->speed.at(sms);
      all.push_back(e);
      sum += e;
      if (e > worst) {
        worst     = e;
        row.worst = fmt::format("{}@{} SMs: {:.3f} vs {:.3f}", kernel_name(*k), sms, v, k->speed.at(sms));
      }
    }
    row.kernel_mean.push_back(predicted.empty() ? 0 : sum / static_cast<double>(predicted.size()));
    row.kernel_names.push_back(kernel_name(*k));
  }
  row.kernels = static_cast<int>(kernels.size());
  row.points  = static_cast<int>(all.size());
  row.median  = median(all);
  row.max     = all.empty() ? 0 : worst;
  for (double e : all)
    row.mean += e / static_cast<double>(all.size());
  return row;
}

} // namespace

std::vector<SmKernel> sm_scaling_kernels(const std::vector<Measurement>& records, int sm_count)
{
  std::map<std::string, double> full_us; // kernel key -> us on the full GPU
  std::map<std::string, SmKernel> by_key;
  for (const auto& m : records) {
    if (!m.ok() || m.spec.family != "sm_scaling" || scaling_family(m.spec.variant).empty())
      continue;
    auto dims = m.spec.params;
    dims.erase("sms");
    const std::string key = MeasureSpec{m.spec.variant, "", dims}.key();
    auto it               = m.extra.find("actual_sms");
    const int sms         = static_cast<int>(it == m.extra.end() ? m.spec.params.at("sms") : it->second);
    SmKernel& k           = by_key[key];
    k.family              = scaling_family(m.spec.variant);
    k.variant             = m.spec.variant;
    k.dims                = dims;
    if (sms >= sm_count)
      full_us[key] = m.us;
    else
      k.speed[sms] = m.us; // turned into a speed below, once the full-GPU time is known
  }
  std::vector<SmKernel> out;
  for (auto& [key, k] : by_key) {
    auto f = full_us.find(key);
    if (f == full_us.end() || k.speed.empty())
      continue;
    for (auto& [sms, us] : k.speed)
      us = f->second / us;
    out.push_back(std::move(k));
  }
  return out;
}

double gemm_tiles(const SmKernel& k, int tm, int tn)
{
  return dim(k, "experts", 1) * std::ceil(dim(k, "tokens", 1) / tm) * std::ceil(dim(k, "n", 1) / tn);
}

double wave_factor(double tiles, int sms, int sm_count) { return std::ceil(tiles / sm_count) / std::ceil(tiles / sms); }

double compute_share(const SmKernel& k, const SmRates& rates)
{
  const bool fp8 = k.variant.find("fp8") != std::string::npos;
  const double g = dim(k, "experts", 1), m = dim(k, "tokens", 1), n = dim(k, "n", 1), kk = dim(k, "k", 1);
  const double in_b  = fp8 ? 1 : 2; // weights and activations in the kernel's dtype, output in BF16
  const double flops = 2 * g * m * n * kk;
  const double bytes = g * (n * kk * in_b + m * kk * in_b + m * n * 2);
  const double tc    = flops / (fp8 ? rates.fp8_flops_per_s : rates.bf16_flops_per_s);
  const double tm    = bytes / rates.hbm_bytes_per_s;
  return tc / (tc + tm);
}

std::vector<SmLooRow> sm_scaling_loo(const std::vector<SmKernel>& kernels, int sm_count, const SmRates& rates)
{
  std::map<int, std::vector<double>> memory_speeds;
  for (const auto& k : kernels)
    if (k.family == "memory")
      for (const auto& [sms, s] : k.speed)
        memory_speeds[sms].push_back(s);
  Speeds memory_curve;
  for (const auto& [sms, v] : memory_speeds)
    memory_curve[sms] = median(v);
  const bool have_rates = rates.bf16_flops_per_s > 0 && rates.fp8_flops_per_s > 0 && rates.hbm_bytes_per_s > 0;

  const Predictor median_curve = [](const Train& train, const SmKernel& k) {
    return scaled_median(train, k, [](const SmKernel&, int) { return 1.0; });
  };
  std::vector<SmLooRow> rows;
  for (const char* family : {"gemm", "grouped_gemm"}) {
    Train members;
    for (const auto& k : kernels)
      if (k.family == family)
        members.push_back(&k);
    if (members.size() < 3)
      continue;
    rows.push_back(evaluate(family, "median curve", members, median_curve));
    rows.push_back(evaluate(family, "wave quantization", members, wave_model(sm_count)));
    if (have_rates && !memory_curve.empty())
      rows.push_back(evaluate(family, "roofline blend", members, blend_model(memory_curve, rates)));
  }
  return rows;
}

std::string format_sm_loo_report(const std::vector<SmLooRow>& rows)
{
  std::string s = fmt::format("  {:<13}{:<19}{:>8}{:>8}{:>9}{:>8}{:>8}{:>11}  worst\n", "family", "model", "kernels",
                              "points", "median", "mean", "max", "better on");
  const SmLooRow* reference = nullptr;
  for (const auto& r : rows) {
    if (r.model == "median curve")
      reference = &r;
    std::string better = "-";
    if (reference && reference != &r && reference->family == r.family &&
        reference->kernel_mean.size() == r.kernel_mean.size()) {
      int n = 0;
      for (size_t i = 0; i < r.kernel_mean.size(); ++i)
        n += r.kernel_mean[i] < reference->kernel_mean[i];
      better = fmt::format("{} of {}", n, r.kernel_mean.size());
    }
    s += fmt::format("  {:<13}{:<19}{:>8}{:>8}{:>8.1f}%{:>7.1f}%{:>7.1f}%{:>11}  {}\n", r.family, r.model, r.kernels,
                     r.points, 100 * r.median, 100 * r.mean, 100 * r.max, better, r.worst);
  }
  s += "  mean error per left-out kernel (%), models in the order above:\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r > 0 && rows[r - 1].family == rows[r].family)
      continue;
    for (size_t i = 0; i < rows[r].kernel_names.size(); ++i) {
      std::string line = fmt::format("    {:<58}", rows[r].kernel_names[i]);
      for (size_t m = r; m < rows.size() && rows[m].family == rows[r].family; ++m)
        line += fmt::format("{:>7.1f}", 100 * rows[m].kernel_mean[i]);
      s += line + "\n";
    }
  }
  return s;
}

} // namespace dbosim::calib

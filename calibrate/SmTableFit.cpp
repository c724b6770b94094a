#include "calibrate/SmTableFit.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace dbosim::calib {
namespace {

double extra_or(const Measurement& m, const char* key, double fallback)
{
  auto it = m.extra.find(key);
  return it == m.extra.end() ? fallback : it->second;
}

std::string info_or(const std::map<std::string, std::string>& info, const char* key)
{
  auto it = info.find(key);
  return it == info.end() ? "?" : it->second;
}

/** The timing a record was measured with: "rest_ms=30", "settle_ms=100" or "" (cold L2). */
std::string timing_of(const Measurement& m)
{
  for (const char* key : {"rest_ms", "settle_ms"})
    if (auto it = m.spec.params.find(key); it != m.spec.params.end())
      return std::string(key) + "=" + std::to_string(static_cast<int>(it->second));
  return "";
}

} // namespace

std::vector<FitSmTable> fit_sm_tables(const std::vector<Measurement>& records, int sm_count)
{
  using Shape = std::tuple<std::string, int, int>; // family, n, k
  // A shape's tables come from one timing (validate/testbed/diag/README.md): that of its last record in the file, so
  // a run appended with a new timing replaces the shapes it measured.
  std::map<Shape, std::string> timing;
  for (const auto& m : records)
    if (m.ok() && m.spec.family == "sm_table")
      timing[{m.spec.variant, static_cast<int>(m.spec.params.at("n")), static_cast<int>(m.spec.params.at("k"))}] =
          timing_of(m);
  std::map<Shape, std::map<double, double>> full_us;
  std::map<std::tuple<std::string, int, int, int>, std::map<double, double>> part_us; // + sms
  std::map<Shape, const Measurement*> env_of;
  std::map<Shape, std::vector<double>> clk_full, clk_part; // the SM clock over the timed repeats, where recorded
  const Measurement* env = nullptr;
  for (const auto& m : records) {
    if (m.spec.family == "env")
      env = &m;
    if (!m.ok() || m.spec.family != "sm_table")
      continue;
    const auto& p  = m.spec.params;
    const int n    = static_cast<int>(p.at("n"));
    const int k    = static_cast<int>(p.at("k"));
    const int sms  = static_cast<int>(extra_or(m, "actual_sms", p.at("sms")));
    const Shape sh = {m.spec.variant, n, k};
    if (timing_of(m) != timing[sh])
      continue;
    env_of[sh] = env;
    if (sms >= sm_count)
      full_us[sh][p.at("tokens")] = m.us;
    else
      part_us[{m.spec.variant, n, k, sms}][p.at("tokens")] = m.us;
    if (m.extra.count("sm_clock_med_mhz"))
      (sms >= sm_count ? clk_full : clk_part)[sh].push_back(m.extra.at("sm_clock_med_mhz"));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::vector<FitSmTable> out;
  for (const auto& [key, by_tokens] : part_us) {
    const auto& [family, n, k, sms] = key;
    const Shape sh                  = {family, n, k};
    FitSmTable t{family, {{"n", n}, {"k", k}}, sms, {}, {}, ""};
    for (const auto& [tokens, us] : by_tokens) {
      auto b = full_us[sh].find(tokens);
      if (b == full_us[sh].end())
        continue;
      t.tokens.push_back(tokens);
      t.speed.push_back(b->second / us);
    }
    if (t.tokens.size() < 2)
      continue;
    const Measurement* e = env_of[sh];
    const auto& info     = e ? e->info : std::map<std::string, std::string>{};
    t.source = "measured " + info_or(info, "date").substr(0, 10) + " on " + info_or(info, "gpu_name") + " (commit " +
               info_or(info, "git_commit") + "): green context of " + std::to_string(sms) +
               " SMs, cuBLASLt told the SM count; t(" + std::to_string(sm_count) + " SMs)/t(" + std::to_string(sms) +
               " SMs) per token count, both medians of repeats in the same run, ";
    const std::string& tm = timing[sh];
    const std::string ms  = tm.substr(tm.find('=') + 1);
    if (tm.rfind("rest_ms", 0) == 0)
      t.source += "cold L2, each point timed in a burst of about 15 ms after the GPU idled " + ms +
                  " ms (the clock not held down by the power limit, as in the overlap testbed)";
    else if (tm.rfind("settle_ms", 0) == 0)
      t.source +=
          "no L2 flush, timed after " + ms + " ms of back-to-back launches (the clock a sustained load settles at)";
    else
      t.source += "cold L2";
    if (!clk_full[sh].empty() && !clk_part[sh].empty()) {
      char clk[96];
      std::snprintf(clk, sizeof clk, "; median SM clock %.0f MHz at %d SMs, %.0f at the partitions (NVML)",
                    median(clk_full[sh]), sm_count, median(clk_part[sh]));
      t.source += clk;
    }
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace dbosim::calib

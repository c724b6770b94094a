#include "calibrate/SmTableFit.hpp"

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

} // namespace

std::vector<FitSmTable> fit_sm_tables(const std::vector<Measurement>& records, int sm_count)
{
  using Shape = std::tuple<std::string, int, int>; // family, n, k
  std::map<Shape, std::map<double, double>> full_us;
  std::map<std::tuple<std::string, int, int, int>, std::map<double, double>> part_us; // + sms
  std::map<Shape, const Measurement*> env_of;
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
    env_of[sh]     = env;
    if (sms >= sm_count)
      full_us[sh][p.at("tokens")] = m.us;
    else
      part_us[{m.spec.variant, n, k, sms}][p.at("tokens")] = m.us;
  }
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
               " SMs) per token count, both medians of repeats in the same run, cold L2";
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace dbosim::calib

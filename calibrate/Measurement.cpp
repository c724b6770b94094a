#include "calibrate/Measurement.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace dbosim::calib {

std::string format_number(double v)
{
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string MeasureSpec::key() const
{
  std::string k = family;
  if (!variant.empty())
    k += "/" + variant;
  k += "/";
  bool first = true;
  for (const auto& [name, value] : params) {
    if (!first)
      k += ",";
    k += name + "=" + format_number(value);
    first = false;
  }
  return k;
}

nlohmann::json to_json(const Measurement& m)
{
  nlohmann::json j;
  j["key"]    = m.spec.key();
  j["family"] = m.spec.family;
  if (!m.spec.variant.empty())
    j["variant"] = m.spec.variant;
  j["params"] = m.spec.params;
  j["status"] = m.status;
  if (m.ok() && m.reps > 0) {
    j["us"]     = m.us;
    j["us_p10"] = m.us_p10;
    j["us_p90"] = m.us_p90;
    j["reps"]   = m.reps;
  }
  if (!m.extra.empty())
    j["extra"] = m.extra;
  if (!m.info.empty())
    j["info"] = m.info;
  return j;
}

Measurement measurement_from_json(const nlohmann::json& j)
{
  if (!j.is_object() || !j.contains("key") || !j.contains("family") || !j.contains("status"))
    throw std::runtime_error("record lacks key, family or status");
  Measurement m;
  m.spec.family  = j.at("family").get<std::string>();
  m.spec.variant = j.value("variant", std::string());
  if (j.contains("params"))
    m.spec.params = j.at("params").get<std::map<std::string, double>>();
  m.status = j.at("status").get<std::string>();
  m.us     = j.value("us", 0.0);
  m.us_p10 = j.value("us_p10", 0.0);
  m.us_p90 = j.value("us_p90", 0.0);
  m.reps   = j.value("reps", 0);
  if (j.contains("extra"))
    m.extra = j.at("extra").get<std::map<std::string, double>>();
  if (j.contains("info"))
    m.info = j.at("info").get<std::map<std::string, std::string>>();
  if (m.spec.key() != j.at("key").get<std::string>())
    throw std::runtime_error("key '" + j.at("key").get<std::string>() + "' does not match its family and params");
  if (m.ok() && m.reps > 0 && !(std::isfinite(m.us) && m.us > 0))
    throw std::runtime_error("record '" + m.spec.key() + "' has a non-positive or non-finite duration");
  return m;
}

void summarize_samples(Measurement& m, std::vector<double> samples_us)
{
  m.reps = static_cast<int>(samples_us.size());
  if (samples_us.empty())
    return;
  std::sort(samples_us.begin(), samples_us.end());
  auto at = [&](double q) {
    double pos  = q * static_cast<double>(samples_us.size() - 1);
    size_t lo   = static_cast<size_t>(std::floor(pos));
    size_t hi   = std::min(lo + 1, samples_us.size() - 1);
    double frac = pos - static_cast<double>(lo);
    return samples_us[lo] * (1 - frac) + samples_us[hi] * frac;
  };
  m.us     = at(0.5);
  m.us_p10 = at(0.1);
  m.us_p90 = at(0.9);
}

} // namespace dbosim::calib

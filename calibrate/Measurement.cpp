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

namespace {
/** j[key] as a T; a value of another type is an error naming the key. */
template <class T> T field(const nlohmann::json& j, const char* key, const char* expected)
{
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(std::string(key) + ": expected " + expected + ", got " + j.at(key).dump());
  }
}

template <class T> T field_or(const nlohmann::json& j, const char* key, const char* expected, T fallback)
{
  return j.contains(key) ? field<T>(j, key, expected) : fallback;
}
} // namespace

Measurement measurement_from_json(const nlohmann::json& j)
{
  if (!j.is_object() || !j.contains("key") || !j.contains("family") || !j.contains("status"))
    throw std::runtime_error("record lacks key, family or status");
  Measurement m;
  m.spec.family  = field<std::string>(j, "family", "a string");
  m.spec.variant = field_or<std::string>(j, "variant", "a string", "");
  if (j.contains("params"))
    m.spec.params = field<std::map<std::string, double>>(j, "params", "an object of numbers");
  m.status = field<std::string>(j, "status", "a string");
  m.us     = field_or<double>(j, "us", "a number", 0.0);
  m.us_p10 = field_or<double>(j, "us_p10", "a number", 0.0);
  m.us_p90 = field_or<double>(j, "us_p90", "a number", 0.0);
  m.reps   = field_or<int>(j, "reps", "an integer", 0);
  if (j.contains("extra"))
    m.extra = field<std::map<std::string, double>>(j, "extra", "an object of numbers");
  if (j.contains("info"))
    m.info = field<std::map<std::string, std::string>>(j, "info", "an object of strings");
  const std::string key = field<std::string>(j, "key", "a string");
  if (m.spec.key() != key)
    throw std::runtime_error("key '" + key + "' does not match its family and params");
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

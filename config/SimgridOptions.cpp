#include "config/SimgridOptions.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace dbosim::sim {

namespace {

/** @brief A --cfg key dbosim passes on to SimGrid, and the values it takes. A name-valued key (lo == hi == 0) is
 *  checked by the probe below; a numeric one must lie in [lo, hi] here: outside it SimGrid crashes on the first
 *  actor (a stack of 0 KiB, a negative guard), deadlocks (no concurrent activity) or rounds op times past the
 *  timeline's checks, none of which a one-host probe without actors can see. */
struct CfgKey {
  const char* key;
  double lo, hi;
  bool integer;
  const char* unit;
};

constexpr CfgKey cfg_keys[] = {
    {"contexts/factory", 0, 0, false, "thread, raw, ucontext or boost"},
    {"contexts/stack-size", 64, 1048576, true, "KiB"},
    {"contexts/guard-size", 0, 1024, true, "pages"},
    {"contexts/nthreads", 1, 1024, true, "threads"},
    {"contexts/synchro", 0, 0, false, "a synchronization name"},
    {"network/model", 0, 0, false, "a SimGrid network model"},
    {"cpu/model", 0, 0, false, "a SimGrid CPU model"},
    {"host/model", 0, 0, false, "a SimGrid host model"},
    {"cpu/optim", 0, 0, false, "Full, Lazy or TI"},
    {"network/optim", 0, 0, false, "Full or Lazy"},
    {"network/crosstraffic", 0, 0, false, "0 or 1"},
    {"network/TCP-gamma", 0, 1e12, false, "bytes"},
    {"network/latency-factor", 1e-6, 1e6, false, "x"},
    {"network/bandwidth-factor", 1e-6, 1e6, false, "x"},
    {"network/weight-S", 0, 1e12, false, "bytes"},
    {"maxmin/concurrency-limit", -1, 1e9, true, "-1: no limit"},
    {"maxmin/precision", 1e-12, 1e-5, false, "SimGrid's default 1e-5"},
    {"surf/precision", 1e-12, 1e-9, false, "s; SimGrid's default 1e-9"},
    {"exception/cutpath", 0, 0, false, "yes or no"},
};

/** @brief Why dbosim does not pass `--cfg=KEY:VALUE` on ("" when it does; a name is left to the probe). */
std::string cfg_problem(const std::string& arg, const std::string& key, const std::string& value)
{
  const CfgKey* k = nullptr;
  for (const CfgKey& c : cfg_keys)
    if (key == c.key)
      k = &c;
  if (!k) {
    std::string keys;
    for (const CfgKey& c : cfg_keys)
      keys += fmt::format("{}{}", keys.empty() ? "" : ", ", c.key);
    return fmt::format("'{}': {} is not a --cfg key dbosim passes on (those it takes: {})", arg, key, keys);
  }
  if (k->lo == 0 && k->hi == 0)
    return "";
  char* end       = nullptr;
  const double v  = std::strtod(value.c_str(), &end);
  const bool good = end != value.c_str() && *end == '\0' && std::isfinite(v) && v >= k->lo && v <= k->hi &&
                    (!k->integer || v == std::floor(v)) && !(key == "maxmin/concurrency-limit" && v == 0);
  if (good)
    return "";
  return fmt::format("'{}': {} must be {} in {}..{}{} ({})", arg, key, k->integer ? "an integer" : "a number", k->lo,
                     k->hi, key == "maxmin/concurrency-limit" ? ", not 0" : "", k->unit);
}

} // namespace

std::string simgrid_option_problem(const std::vector<std::string>& extra)
{
  for (const std::string& a : extra) {
    const bool cfg = a.rfind("--cfg=", 0) == 0, log = a.rfind("--log=", 0) == 0;
    const auto colon = a.find(':');
    if (!(cfg || log) || a.size() == 6 || (cfg && (colon == std::string::npos || colon == 6 || colon + 1 == a.size())))
      return fmt::format("'{}' is not a SimGrid option dbosim passes on", a);
    if (cfg)
      if (std::string why = cfg_problem(a, a.substr(6, colon - 6), a.substr(colon + 1)); !why.empty())
        return why;
  }
  return "";
}

} // namespace dbosim::sim

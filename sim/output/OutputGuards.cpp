#include "sim/output/OutputGuards.hpp"

#include "base/InputError.hpp"
#include "sim/output/TimelineCheck.hpp"

#include <fmt/format.h>

#include <cmath>

namespace dbosim::sim {
namespace {

bool ends_with(const std::string& s, const char* suffix)
{
  const std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

bool is_time_key(const std::string& key)
{
  return ends_with(key, "_us") || ends_with(key, "_ms") || ends_with(key, "_s");
}

/** `key` is the nearest object key above `node` (a list's items inherit it); `busy`: some key above names a busy
 *  share. */
void walk(const nlohmann::ordered_json& node, const std::string& path, const std::string& key, bool busy,
          std::vector<std::string>& out)
{
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it)
      walk(it.value(), path.empty() ? it.key() : path + "." + it.key(), it.key(),
           busy || it.key().find("busy") != std::string::npos, out);
    return;
  }
  if (node.is_array()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      walk(node[i], fmt::format("{}[{}]", path, i), key, busy, out);
    return;
  }
  if (!node.is_number())
    return;
  const double x = node.get<double>();
  if (!std::isfinite(x))
    out.push_back(fmt::format("{} = {} is not finite", path, x));
  else if (busy && (x < 0 || x > 100 + 1e-9))
    out.push_back(fmt::format("{} = {}% busy is outside 0..100%", path, x));
  else if (is_time_key(key) && x < 0)
    out.push_back(fmt::format("{} = {} is a negative time", path, x));
}

} // namespace

std::vector<std::string> summary_violations(const nlohmann::ordered_json& summary)
{
  std::vector<std::string> out;
  walk(summary, "", "", false, out);
  return out;
}

void require_no_violations(const std::vector<std::string>& violations, const std::string& what)
{
  if (violations.empty())
    return;
  std::string text;
  for (std::size_t i = 0; i < violations.size() && i < 5; ++i)
    text += (i ? "; " : "") + violations[i];
  if (violations.size() > 5)
    text += fmt::format("; and {} more", violations.size() - 5);
  throw InternalError(fmt::format("{}: {}", what, text));
}

void require_valid_timeline(const Schedule& sched, const Timeline& tl)
{
  std::vector<std::string> v = timeline_violations(sched, tl);
  for (std::string& d : duration_violations(sched, tl))
    v.push_back(std::move(d));
  require_no_violations(v, "the replayed timeline breaks an invariant");
}

void require_valid_summary(const nlohmann::ordered_json& summary)
{
  require_no_violations(summary_violations(summary), "an output figure breaks a physical bound");
}

} // namespace dbosim::sim

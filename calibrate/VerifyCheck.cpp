#include "calibrate/VerifyCheck.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

namespace dbosim::calib {

std::vector<VerifyRow> compare_verification(const std::vector<Measurement>& fitted,
                                            const std::vector<Measurement>& fresh)
{
  std::map<std::string, const Measurement*> by_key;
  for (const auto& m : fitted)
    if (m.ok() && m.reps > 0)
      by_key.emplace(m.spec.key(), &m);
  std::vector<VerifyRow> rows;
  for (const auto& m : fresh) {
    if (!m.ok() || m.reps == 0)
      continue;
    auto it = by_key.find(m.spec.key());
    if (it == by_key.end())
      continue;
    rows.push_back({m.spec.key(), it->second->us, m.us, m.us / it->second->us - 1.0});
  }
  if (rows.empty())
    throw std::runtime_error("no verification record matches a fitted record");
  return rows;
}

std::string verification_note(const std::vector<VerifyRow>& rows)
{
  std::string s;
  for (const auto& r : rows) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s%s %.1f us, fresh %.1f us (%+.1f%%)", s.empty() ? "" : "; ", r.key.c_str(),
                  r.fitted_us, r.fresh_us, 100 * r.rel_diff);
    s += buf;
  }
  return s;
}

} // namespace dbosim::calib

#include "validate/CaseResult.hpp"

#include "base/InputError.hpp"
#include "config/YamlMap.hpp"
#include "hw/HwProfile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace dbosim::validate {

bool CaseResult::pass() const { return !checked() || std::abs(error_pct()) <= tolerance_pct; }

namespace {

/** MAPE per `key(row)`; rows whose key is empty are left out. */
template <typename Key> std::map<std::string, GroupSummary> summarize_by(const std::vector<CaseResult>& rows, Key key)
{
  std::map<std::string, GroupSummary> g;
  for (const CaseResult& r : rows) {
    const std::string k = key(r);
    if (k.empty())
      continue;
    GroupSummary& s = g[k];
    ++s.cases;
    s.checked += r.checked() ? 1 : 0;
    s.failed += r.pass() ? 0 : 1;
    s.mape_pct += std::abs(r.error_pct());
  }
  for (auto& [name, s] : g)
    s.mape_pct /= s.cases;
  return g;
}

} // namespace

std::map<std::string, GroupSummary> summarize(const std::vector<CaseResult>& rows)
{
  return summarize_by(rows, [](const CaseResult& r) { return r.group; });
}

std::map<std::string, GroupSummary> summarize_slices(const std::vector<CaseResult>& rows)
{
  return summarize_by(rows, [](const CaseResult& r) { return r.slice.empty() ? r.slice : r.group + " " + r.slice; });
}

std::map<std::string, GroupSummary> summarize_generations(const std::vector<CaseResult>& rows)
{
  return summarize_by(
      rows, [](const CaseResult& r) { return r.generation.empty() ? r.generation : r.group + " " + r.generation; });
}

static std::string status(const CaseResult& r) { return !r.checked() ? "info" : r.pass() ? "ok" : "FAIL"; }

/** The summaries of `groups` under a header row whose first column is `title`; an empty table is left out unless
 *  `always`. */
static std::string summary_table(const std::string& title, const std::map<std::string, GroupSummary>& groups,
                                 bool always)
{
  if (groups.empty() && !always)
    return {};
  std::string out = fmt::format("\n{:<38} {:>6} {:>8} {:>7} {:>8}\n", title, "cases", "checked", "failed", "MAPE%");
  for (const auto& [name, s] : groups)
    out += fmt::format("{:<38} {:>6} {:>8} {:>7} {:>8.2f}\n", name, s.cases, s.checked, s.failed, s.mape_pct);
  return out;
}

std::string format_results(const std::vector<CaseResult>& rows)
{
  std::string out = fmt::format("{:<38} {:<34} {:<20} {:>12} {:>12} {:>8} {:>6}  {}\n", "group", "case", "metric",
                                "predicted", "measured", "error%", "tol%", "status");
  for (const CaseResult& r : rows)
    out += fmt::format("{:<38} {:<34} {:<20} {:>12.4g} {:>12.4g} {:>+8.1f} {:>6}  {} ({})\n", r.group, r.name, r.metric,
                       r.predicted, r.measured, r.error_pct(),
                       r.checked() ? fmt::format("{:.0f}", r.tolerance_pct) : "-", status(r), r.unit);
  out += summary_table("group", summarize(rows), true);
  out += summary_table("by engine and phase (not gated)", summarize_slices(rows), false);
  out += summary_table("by GPU generation (not gated)", summarize_generations(rows), false);
  return out;
}

static std::string csv_quote(const std::string& s)
{
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string results_csv(const std::vector<CaseResult>& rows)
{
  std::string out = "group,name,metric,unit,predicted,measured,error_pct,tolerance_pct,status,source\n";
  for (const CaseResult& r : rows)
    out += fmt::format("{},{},{},{},{:.6g},{:.6g},{:.3f},{:.1f},{},{}\n", r.group, r.name, csv_quote(r.metric), r.unit,
                       r.predicted, r.measured, r.error_pct(), r.tolerance_pct, status(r), csv_quote(r.source));
  return out;
}

Baseline load_baseline_file(const std::string& path)
{
  const YAML::Node root = load_yaml_file(path);
  YamlMap top(root, path, "");
  YamlMap groups = top.get_map("groups");
  Baseline b;
  for (const std::string& k : groups.keys())
    b.mape_pct[k] = groups.get_double(k, 0, 1e6);
  groups.finish();
  if (top.has("cases")) {
    const YAML::Node cases = top.raw("cases");
    if (!cases.IsMap())
      top.fail("cases", "must be a mapping of group names to lists of case names", "{e2e: [case, ...]}");
    for (const auto& kv : cases) {
      const std::string g = kv.first.as<std::string>();
      if (!kv.second.IsSequence())
        top.fail_at(kv.second, "cases." + g, "must be a list of case names");
      for (const auto& n : kv.second) {
        if (!n.IsScalar())
          top.fail_at(n, "cases." + g, "a case name must be a string");
        b.cases[g].push_back(n.as<std::string>());
      }
    }
  }
  if (top.has("generations")) {
    YamlMap gens = top.get_map("generations");
    for (const std::string& g : gens.keys()) {
      YamlMap per = gens.get_map(g);
      for (const std::string& gen : per.keys()) {
        YamlMap e = per.get_map(gen);
        if (const auto valid = models::hw_generations(); std::find(valid.begin(), valid.end(), gen) == valid.end())
          per.fail(gen, "unknown GPU generation", fmt::format("{}", fmt::join(valid, ", ")));
        GenerationBand band;
        band.mape_pct      = e.get_double("mape_pct", 0, 1e6);
        const YAML::Node l = e.raw("cases");
        if (!l.IsSequence())
          e.fail("cases", "must be a list of case names");
        for (const auto& n : l) {
          if (!n.IsScalar())
            e.fail_at(n, "cases", "a case name must be a string");
          band.cases.push_back(n.as<std::string>());
        }
        e.finish();
        b.generations[g][gen] = std::move(band);
      }
      per.finish();
    }
    gens.finish();
  }
  top.allow({"note"});
  top.finish();
  return b;
}

std::map<std::string, double> load_baseline(const std::string& path) { return load_baseline_file(path).mape_pct; }

std::string baseline_yaml(const std::map<std::string, GroupSummary>& groups, const std::vector<CaseResult>& rows)
{
  std::string out = "# MAPE (%) per validate group, recorded by `dbosim validate --write-baseline`; the CI gate fails "
                    "when a group's MAPE rises more than 2 points above it.\ngroups:\n";
  for (const auto& [name, s] : groups)
    out += fmt::format("  {}: {:.2f}\n", name, s.mape_pct);
  std::string cases;
  for (const auto& [name, s] : groups) {
    if (name.rfind("e2e", 0) != 0)
      continue;
    cases += fmt::format("  {}:\n", name);
    for (const CaseResult& r : rows)
      if (r.group == name)
        cases += fmt::format("    - {}\n", r.name);
  }
  if (!cases.empty())
    out += "# the cases each e2e group's MAPE was recorded over (the uncertainty band names them)\ncases:\n" + cases;
  std::string gens;
  for (const auto& [name, s] : groups) {
    if (name.rfind("e2e", 0) != 0)
      continue;
    std::map<std::string, std::vector<const CaseResult*>> by_gen;
    for (const CaseResult& r : rows)
      if (r.group == name && !r.generation.empty())
        by_gen[r.generation].push_back(&r);
    if (by_gen.empty())
      continue;
    gens += fmt::format("  {}:\n", name);
    for (const auto& [gen, rs] : by_gen) {
      double sum = 0;
      std::string names;
      for (const CaseResult* r : rs) {
        sum += std::abs(r->error_pct());
        names += (names.empty() ? "" : ", ") + r->name;
      }
      gens += fmt::format("    {}: {{mape_pct: {:.2f}, cases: [{}]}}\n", gen, sum / rs.size(), names);
    }
  }
  if (!gens.empty())
    out += "# each GPU generation's share of the e2e groups (its uncertainty band when it has 3 cases or more)\n"
           "generations:\n" +
           gens;
  return out;
}

std::vector<CaseResult> gated_rows(const std::vector<CaseResult>& rows, const Baseline& baseline,
                                   std::vector<std::string>& new_cases)
{
  std::vector<CaseResult> kept;
  for (const CaseResult& r : rows) {
    const auto listed = baseline.cases.find(r.group);
    if (listed != baseline.cases.end() &&
        std::find(listed->second.begin(), listed->second.end(), r.name) == listed->second.end()) {
      new_cases.push_back(r.name);
      continue;
    }
    kept.push_back(r);
  }
  return kept;
}

std::vector<std::string> gate_violations(const std::map<std::string, GroupSummary>& now,
                                         const std::map<std::string, double>& baseline, double slack_pct)
{
  std::vector<std::string> v;
  for (const auto& [name, s] : now) {
    auto it = baseline.find(name);
    if (it == baseline.end())
      v.push_back(fmt::format("group {}: no recorded MAPE in the baseline", name));
    else if (s.mape_pct > it->second + slack_pct)
      v.push_back(fmt::format("group {}: MAPE {:.2f}% > recorded {:.2f}% + {:.0f} points", name, s.mape_pct, it->second,
                              slack_pct));
  }
  return v;
}

} // namespace dbosim::validate

#include "calibrate/ProfileDiff.hpp"

#include "calibrate/Stats.hpp"
#include "models/OpTables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace dbosim::calib {
namespace {
using models::Curve;
using models::HwProfile;

/** One family's points as they are compared. */
class Family {
public:
  Family(std::string section, std::string family) : d_{}
  {
    d_.section = std::move(section);
    d_.family  = std::move(family);
  }

  /** One point: A's and B's value of the same quantity at `where`. */
  void add(double a, double b, const std::string& where)
  {
    if (a == b) { // both zero included: the same value
      push(1.0, where);
      return;
    }
    if (!(a > 0) || !(b > 0) || !std::isfinite(a) || !std::isfinite(b)) {
      d_.notes.push_back(fmt::format("{}: A {:.4g}, B {:.4g}, no ratio", where, a, b));
      return;
    }
    push(b / a, where);
  }

  void entry_in_both() { ++d_.common_entries; }
  void only_a(const std::string& entry) { d_.only_a.push_back(entry); }
  void only_b(const std::string& entry) { d_.only_b.push_back(entry); }
  void note(const std::string& text) { d_.notes.push_back(text); }

  /** A scalar, floor or factor: one entry of one value. */
  void single(double a, double b)
  {
    d_.single_value = true;
    d_.value_a      = a;
    d_.value_b      = b;
    entry_in_both();
    add(a, b, d_.family);
  }

  FamilyDiff finish()
  {
    d_.points = static_cast<int>(ratios_.size());
    if (!ratios_.empty()) {
      d_.median_ratio = median(ratios_);
      d_.min_ratio    = *std::min_element(ratios_.begin(), ratios_.end());
      d_.max_ratio    = *std::max_element(ratios_.begin(), ratios_.end());
    }
    return std::move(d_);
  }

private:
  void push(double r, const std::string& where)
  {
    if (ratios_.empty() || std::abs(std::log(r)) > std::abs(std::log(d_.worst_ratio))) {
      d_.worst_ratio = r;
      d_.worst_at    = where;
    }
    ratios_.push_back(r);
  }

  FamilyDiff d_;
  std::vector<double> ratios_;
};

using Eval = std::function<double(const Curve&, double)>;

/** Both curves read at the union of their points inside the range both cover (see the file comment). */
void compare_curves(Family& f, const std::string& entry, const Curve& a, const Curve& b, const Eval& eval,
                    const char* x_unit)
{
  if (a.empty() || b.empty()) {
    f.note(fmt::format("{}: {} has no points", entry, a.empty() ? "A" : "B"));
    return;
  }
  const double lo = std::max(a.x.front(), b.x.front());
  const double hi = std::min(a.x.back(), b.x.back());
  if (lo > hi) {
    f.note(fmt::format("{}: no common range (A {:g}..{:g}, B {:g}..{:g} {})", entry, a.x.front(), a.x.back(),
                       b.x.front(), b.x.back(), x_unit));
    return;
  }
  f.entry_in_both();
  std::set<double> grid;
  for (const Curve* c : {&a, &b})
    for (double x : c->x)
      if (x >= lo && x <= hi)
        grid.insert(x);
  for (double x : grid)
    f.add(eval(a, x), eval(b, x), fmt::format("{} @ {:g} {}", entry, x, x_unit));
}

/** Entries of one family by name, on each side. */
template <typename T> using Entries = std::map<std::string, const T*>;

/** One family per key of `by_family` (either side), each entry compared by `compare` or listed as one-sided. */
template <typename T, typename Compare>
void diff_grouped(std::vector<FamilyDiff>& out, const std::string& section,
                  const std::map<std::string, Entries<T>>& in_a, const std::map<std::string, Entries<T>>& in_b,
                  Compare compare)
{
  std::set<std::string> families;
  for (const auto* side : {&in_a, &in_b})
    for (const auto& [fam, entries] : *side)
      families.insert(fam);
  const Entries<T> none;
  for (const std::string& fam : families) {
    Family f(section, fam);
    const Entries<T>& ea = in_a.count(fam) ? in_a.at(fam) : none;
    const Entries<T>& eb = in_b.count(fam) ? in_b.at(fam) : none;
    std::set<std::string> names;
    for (const auto* side : {&ea, &eb})
      for (const auto& [name, entry] : *side)
        names.insert(name);
    for (const std::string& name : names) {
      if (!eb.count(name))
        f.only_a(name);
      else if (!ea.count(name))
        f.only_b(name);
      else
        compare(f, name, *ea.at(name), *eb.at(name));
    }
    out.push_back(f.finish());
  }
}

/** Named single values, one family each, in A's order then B's extras. */
void diff_values(std::vector<FamilyDiff>& out, const std::string& section,
                 const std::vector<std::pair<std::string, double>>& a,
                 const std::vector<std::pair<std::string, double>>& b)
{
  auto find = [](const std::vector<std::pair<std::string, double>>& v, const std::string& k) -> const double* {
    for (const auto& [key, value] : v)
      if (key == k)
        return &value;
    return nullptr;
  };
  std::vector<std::string> keys;
  for (const auto* side : {&a, &b})
    for (const auto& kv : *side)
      if (std::find(keys.begin(), keys.end(), kv.first) == keys.end())
        keys.push_back(kv.first);
  for (const std::string& k : keys) {
    Family f(section, k);
    const double* va = find(a, k);
    const double* vb = find(b, k);
    if (va && vb)
      f.single(*va, *vb);
    else if (va)
      f.only_a(k);
    else
      f.only_b(k);
    out.push_back(f.finish());
  }
}

/** The profile's scalars under their YAML keys, in the file's order (values as stored: SI units, us for times). */
std::vector<std::pair<std::string, double>> scalars(const HwProfile& hw)
{
  std::vector<std::pair<std::string, double>> v{{"sm_count", hw.sm_count}};
  for (const auto& [dtype, flops] : hw.peak_flops_per_s)
    v.emplace_back("peak_tflops." + models::dtype_name(dtype), flops);
  v.insert(v.end(), {{"hbm_bandwidth", hw.hbm_bytes_per_s},
                     {"hbm_capacity", hw.hbm_capacity_bytes},
                     {"nvlink_bandwidth", hw.nvlink_bytes_per_s},
                     {"nvlink_latency", hw.nvlink_latency_us},
                     {"nvlink_domain_size", hw.nvlink_domain_size},
                     {"nic_bandwidth", hw.nic_bytes_per_s},
                     {"nic_latency", hw.nic_latency_us},
                     {"host.launch_cpu", hw.launch_cpu_us},
                     {"host.graph_replay_kernel", hw.graph_replay_kernel_us},
                     {"host.event", hw.event_us},
                     {"host.stream_sync", hw.stream_sync_us},
                     {"efficiency.gemm", hw.gemm_efficiency},
                     {"efficiency.attention", hw.attention_efficiency},
                     {"efficiency.memory", hw.memory_efficiency}});
  return v;
}

std::vector<std::pair<std::string, double>> as_list(const std::map<std::string, double>& m)
{
  return {m.begin(), m.end()};
}

std::map<std::string, Entries<models::OpTable>> tables_by_family(const HwProfile& hw)
{
  std::map<std::string, Entries<models::OpTable>> out;
  for (const auto& t : hw.tables)
    out[t.family][models::table_key(t.family, t.dims)] = &t;
  return out;
}

std::map<std::string, Entries<models::SmTable>> sm_tables_by_family(const HwProfile& hw)
{
  std::map<std::string, Entries<models::SmTable>> out;
  for (const auto& t : hw.sm_tables)
    out[t.family][fmt::format("{} at {} SMs", models::table_key(t.family, t.dims), t.sms)] = &t;
  return out;
}

std::map<std::string, Entries<models::SmScaling>> sm_scaling_by_family(const HwProfile& hw)
{
  std::map<std::string, Entries<models::SmScaling>> out;
  for (const auto& [fam, s] : hw.sm_scaling)
    out[fam]["sm_scaling." + fam] = &s;
  return out;
}

std::string ratio_cell(const FamilyDiff& f, double r) { return f.points ? fmt::format("{:.4f}", r) : "-"; }

} // namespace

std::vector<FamilyDiff> diff_profiles(const HwProfile& a, const HwProfile& b)
{
  std::vector<FamilyDiff> out;
  diff_values(out, "scalar", scalars(a), scalars(b));
  diff_values(out, "kernel_floor", as_list(a.kernel_floor_us), as_list(b.kernel_floor_us));
  diff_values(out, "interference", a.interference.given(), b.interference.given());
  diff_grouped<models::OpTable>(
      out, "table", tables_by_family(a), tables_by_family(b),
      [](Family& f, const std::string& name, const models::OpTable& ta, const models::OpTable& tb) {
        compare_curves(
            f, name, ta.us_by_tokens, tb.us_by_tokens, [](const Curve& c, double x) { return models::table_us(c, x); },
            "tokens");
      });
  diff_grouped<models::SmScaling>(
      out, "sm_scaling", sm_scaling_by_family(a), sm_scaling_by_family(b),
      [](Family& f, const std::string& name, const models::SmScaling& sa, const models::SmScaling& sb) {
        if (sa.retile != sb.retile)
          f.note(fmt::format("{}: retile A {}, B {}", name, sa.retile, sb.retile));
        compare_curves(
            f, name, sa.speed, sb.speed, [](const Curve& c, double x) { return models::speed_at_sms(c, x); }, "SMs");
      });
  diff_grouped<models::SmTable>(
      out, "sm_table", sm_tables_by_family(a), sm_tables_by_family(b),
      [](Family& f, const std::string& name, const models::SmTable& ta, const models::SmTable& tb) {
        compare_curves(
            f, name, ta.speed_by_tokens, tb.speed_by_tokens,
            [](const Curve& c, double x) { return models::speed_at_tokens(c, x); }, "tokens");
      });
  const Curve& ca = a.comm_kernel_bytes_per_s_by_sms;
  const Curve& cb = b.comm_kernel_bytes_per_s_by_sms;
  if (!ca.empty() || !cb.empty()) {
    Family f("comm_kernel", "comm_kernel");
    if (cb.empty())
      f.only_a("comm_kernel");
    else if (ca.empty())
      f.only_b("comm_kernel");
    else // piecewise linear, clamped at the ends: as models/All2AllModel reads it (speed_at_tokens does the same)
      compare_curves(
          f, "comm_kernel", ca, cb, [](const Curve& c, double x) { return models::speed_at_tokens(c, x); }, "SMs");
    out.push_back(f.finish());
  }
  return out;
}

std::string family_diff_text(const std::vector<FamilyDiff>& families)
{
  std::string s = fmt::format("{:<13}{:<30}{:>8}{:>8}{:>9}{:>9}{:>9}  {}\n", "section", "family", "entries", "points",
                              "median", "min", "max", "values (A, B) / farthest from 1");
  for (const FamilyDiff& f : families) {
    std::string last;
    if (f.single_value && f.points)
      last = fmt::format("A {:.4g}, B {:.4g}", f.value_a, f.value_b);
    else if (f.points && f.min_ratio == 1 && f.max_ratio == 1)
      last = "every point the same";
    else if (f.points)
      last = fmt::format("{:.4f} at {}", f.worst_ratio, f.worst_at);
    s += fmt::format("{:<13}{:<30}{:>8}{:>8}{:>9}{:>9}{:>9}  {}\n", f.section, f.family, f.common_entries, f.points,
                     ratio_cell(f, f.median_ratio), ratio_cell(f, f.min_ratio), ratio_cell(f, f.max_ratio), last);
    for (const auto& [label, list] : {std::pair{"only in A", &f.only_a}, std::pair{"only in B", &f.only_b}})
      if (!list->empty())
        s += fmt::format("{:<13}  {} ({}): {}\n", "", label, list->size(), fmt::join(*list, ", "));
    for (const std::string& n : f.notes)
      s += fmt::format("{:<13}  note: {}\n", "", n);
  }
  return s;
}

nlohmann::ordered_json family_diff_json(const std::vector<FamilyDiff>& families)
{
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FamilyDiff& f : families) {
    nlohmann::ordered_json j{
        {"section", f.section}, {"family", f.family}, {"common_entries", f.common_entries}, {"points", f.points}};
    if (f.single_value && f.points) {
      j["a"] = f.value_a;
      j["b"] = f.value_b;
    }
    if (f.points) {
      j["median_ratio"] = f.median_ratio;
      j["min_ratio"]    = f.min_ratio;
      j["max_ratio"]    = f.max_ratio;
      j["worst_ratio"]  = f.worst_ratio;
      j["worst_at"]     = f.worst_at;
    }
    j["only_a"] = f.only_a;
    j["only_b"] = f.only_b;
    j["notes"]  = f.notes;
    out.push_back(j);
  }
  return out;
}

} // namespace dbosim::calib

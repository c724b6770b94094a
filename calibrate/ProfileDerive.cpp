#include "calibrate/ProfileDerive.hpp"

#include "base/InputError.hpp"
#include "calibrate/ResultsStore.hpp"
#include "calibrate/TableWork.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/YamlMap.hpp"
#include "models/OpTables.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dbosim::calib {
namespace {
using models::HwProfile;

/*** The child's datasheet facts (hwprofiles/facts/<name>.yaml) ***/

/** The facts a derived profile takes from its own datasheet, in the order a profile lists them. */
const std::vector<std::string> kFactKeys = {"sm_count",           "peak_tflops",      "hbm_bandwidth",
                                            "hbm_capacity",       "nvlink_bandwidth", "nvlink_latency",
                                            "nvlink_domain_size", "nic_bandwidth",    "nic_latency"};

struct Facts {
  YAML::Node node;
  std::string name, gpu;
  int sm_count = 0;
  std::map<models::DType, double> peak_flops_per_s;
  double hbm_bytes_per_s = 0;
};

/** Reads `{value, source}` under `key` of `m`: the value checked by `read`, the source required. */
template <typename Read> auto fact(YamlMap& m, const std::string& key, Read read)
{
  YamlMap e  = m.get_map(key);
  auto value = read(e);
  e.get_string("source");
  e.finish();
  return value;
}

Facts read_facts(const std::string& path)
{
  Facts f;
  f.node = load_yaml_file(path);
  YamlMap root(f.node, path, "");
  f.name        = root.get_string("name");
  f.gpu         = root.get_string("gpu");
  f.sm_count    = fact(root, "sm_count", [](YamlMap& e) { return e.get_int("value", 1, 1024); });
  YamlMap peaks = root.get_map("peak_tflops");
  for (const auto& name : peaks.keys()) {
    models::DType t;
    if (!models::parse_dtype(name, t))
      peaks.fail(name, "unknown dtype", models::dtype_names());
    f.peak_flops_per_s[t] =
        fact(peaks, name, [](YamlMap& e) { return e.get_quantity("value", UnitKind::flops, 1e12, 1e12, 1e18); });
  }
  peaks.finish();
  auto quantity = [&](const char* key, UnitKind kind, double scale, double lo, double hi) {
    return fact(root, key, [&](YamlMap& e) { return e.get_quantity("value", kind, scale, lo, hi); });
  };
  f.hbm_bytes_per_s = quantity("hbm_bandwidth", UnitKind::bandwidth, 1e9, 1e9, 1e15);
  quantity("hbm_capacity", UnitKind::bytes, 1e9, 1e9, 1e14);
  quantity("nvlink_bandwidth", UnitKind::bandwidth, 1e9, 1e9, 1e14);
  quantity("nvlink_latency", UnitKind::time, 1e-6, 0, 1e-3);
  fact(root, "nvlink_domain_size", [](YamlMap& e) { return e.get_int("value", 1, 1024); });
  quantity("nic_bandwidth", UnitKind::bandwidth, 1e9 / 8, 1e8, 1e13);
  quantity("nic_latency", UnitKind::time, 1e-6, 0, 1e-3);
  root.finish();
  return f;
}

/*** Emitting ***/

/** v rounded to `digits` significant digits (stable text, no float noise), as calibrate/ProfileWriter writes. */
double sig(double v, int digits)
{
  if (v == 0 || !std::isfinite(v))
    return v;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

void number_list(YAML::Emitter& out, const std::vector<double>& v, int digits)
{
  out << YAML::Flow << YAML::BeginSeq;
  for (double x : v)
    out << sig(x, digits);
  out << YAML::EndSeq;
}

/** A map section whose entries are maps with a `source` (host, efficiency, interference, sm_scaling): copied with
 *  each source prefixed by where it now comes from. */
void section_with_sources(YAML::Emitter& out, const YAML::Node& section, const std::string& prefix)
{
  out << YAML::BeginMap;
  for (const auto& kv : section) {
    out << YAML::Key << kv.first << YAML::Value;
    if (!kv.second.IsMap() || !kv.second["source"]) {
      out << kv.second;
      continue;
    }
    if (kv.second.Style() == YAML::EmitterStyle::Flow)
      out << YAML::Flow;
    out << YAML::BeginMap;
    for (const auto& e : kv.second) {
      out << YAML::Key << e.first << YAML::Value;
      if (e.first.as<std::string>() == "source")
        out << YAML::DoubleQuoted << prefix + e.second.as<std::string>();
      else
        out << e.second;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

/** The roofline time (us) of `w` on `hw`, tables ignored (models::kernel_time's roofline). */
double roofline_us(const HwProfile& hw, models::KernelWork w)
{
  w.table_family.clear();
  return models::kernel_time(hw, w).us;
}

struct Derivation {
  const HwProfile& parent;
  const HwProfile& child;
  std::string parent_file;
  std::string what; ///< "h200 (measured YYYY-MM-DD on NVIDIA H200)"
  std::string hbm_note;
};

void derived_tables(YAML::Emitter& out, const YAML::Node& list, const Derivation& d)
{
  out << YAML::BeginSeq;
  for (size_t i = 0; i < list.size(); ++i) {
    const models::OpTable& t = d.parent.tables.at(i);
    std::vector<double> us;
    for (size_t j = 0; j < t.us_by_tokens.x.size(); ++j) {
      std::string why;
      const auto work = table_kernel_work(t.family, t.dims, t.us_by_tokens.x[j], &why);
      if (!work) {
        YamlMap entry(list[i], d.parent_file, fmt::format("tables[{}]", i));
        entry.fail("family", why + ": its times cannot be split into roofline and excess", table_work_families());
      }
      us.push_back(derive_us(t.us_by_tokens.y[j], roofline_us(d.parent, *work), roofline_us(d.child, *work)));
    }
    out << YAML::BeginMap;
    for (const auto& kv : list[i]) {
      const std::string key = kv.first.as<std::string>();
      out << YAML::Key << key << YAML::Value;
      if (key == "us")
        number_list(out, us, 4);
      else if (key == "source")
        out << YAML::DoubleQuoted
            << fmt::format("derived from {}: measured time - its roofline + this GPU's roofline ({}); {}: {}", d.what,
                           d.hbm_note, d.parent.name, kv.second.as<std::string>());
      else
        out << kv.second;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

/** The copy kernel moves each payload byte through HBM twice (read + write), at no FLOPs. */
void derived_comm_kernel(YAML::Emitter& out, const YAML::Node& section, const Derivation& d)
{
  auto per_byte_roofline = [](const HwProfile& hw) { return 2.0 / (hw.hbm_bytes_per_s * hw.memory_efficiency); };
  std::vector<double> gbps;
  for (double g : d.parent.comm_kernel_bytes_per_s_by_sms.y)
    gbps.push_back(1e-9 / derive_us(1.0 / g, per_byte_roofline(d.parent), per_byte_roofline(d.child)));
  out << YAML::BeginMap;
  for (const auto& kv : section) {
    const std::string key = kv.first.as<std::string>();
    out << YAML::Key << key << YAML::Value;
    if (key == "gbps")
      number_list(out, gbps, 4);
    else if (key == "source")
      out << YAML::DoubleQuoted
          << fmt::format("derived from {}: time per payload byte - its roofline (2 bytes of HBM traffic) + this "
                         "GPU's ({}); {}: {}",
                         d.what, d.hbm_note, d.parent.name, kv.second.as<std::string>());
    else
      out << kv.second;
  }
  out << YAML::EndMap;
}

std::string detail(const HwProfile& hw, const char* key)
{
  auto it = hw.provenance.details.find(key);
  return it == hw.provenance.details.end() ? "" : it->second;
}

} // namespace

double derive_us(double parent_us, double parent_roofline_us, double child_roofline_us)
{
  if (!(parent_roofline_us > 0))
    return parent_us;
  if (parent_us >= parent_roofline_us)
    return parent_us - parent_roofline_us + child_roofline_us;
  return parent_us * child_roofline_us / parent_roofline_us;
}

namespace {

/** The child: the parent with the facts' name, peaks and HBM; the facts must keep the parent's SM count and name
 *  a peak for each of the parent's dtypes. */
HwProfile child_profile(const HwProfile& parent, const Facts& facts, YamlMap& facts_root)
{
  if (facts.sm_count != parent.sm_count)
    facts_root.fail("sm_count",
                    fmt::format("{} SMs, but the parent {} has {}: its SM curves and tables do not carry over",
                                facts.sm_count, parent.name, parent.sm_count),
                    std::to_string(parent.sm_count));
  HwProfile child        = parent;
  child.name             = facts.name;
  child.peak_flops_per_s = facts.peak_flops_per_s;
  child.hbm_bytes_per_s  = facts.hbm_bytes_per_s;
  for (const auto& [t, peak] : parent.peak_flops_per_s)
    if (!child.peak_flops_per_s.count(t))
      facts_root.fail("peak_tflops", "lacks the parent's dtype " + models::dtype_name(t),
                      "every dtype of the parent's peak_tflops");
  return child;
}

/** The derived profile's provenance: the parent it came from, the facts, the method. */
void write_derived_provenance(YAML::Emitter& out, const HwProfile& parent, const std::string& parent_label,
                              const std::string& facts_label, const std::string& method)
{
  out << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << "derived";
  out << YAML::Key << "date" << YAML::Value << parent.provenance.date;
  auto put = [&](const std::string& k, const std::string& v) {
    if (!v.empty())
      out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
  };
  put("parent", parent.name);
  put("parent_file", parent_label);
  put("parent_kind", parent.provenance.kind);
  put("parent_date", parent.provenance.date);
  for (const char* k : {"gpu_name", "measured_at", "git_commit", "raw_results", "tables_left_out"})
    put(std::string("parent_") + k, detail(parent, k));
  put("facts", facts_label);
  put("method", method);
  out << YAML::EndMap;
}

} // namespace

std::string derived_profile_yaml(const DeriveOptions& opt)
{
  const std::string parent_label = opt.parent_label.empty() ? opt.parent_profile : opt.parent_label;
  const std::string facts_label  = opt.facts_label.empty() ? opt.facts : opt.facts_label;
  const HwProfile parent         = load_hw_profile(opt.parent_profile); // validates the parent
  const YAML::Node base          = load_yaml_file(opt.parent_profile);
  const Facts facts              = read_facts(opt.facts);
  YamlMap facts_root(facts.node, opt.facts, "");
  if (!parent.measured())
    YamlMap(base, opt.parent_profile, "")
        .fail("provenance", "the parent of a derived profile must be measured",
              "a profile written by dbosim-calibrate fit");
  const HwProfile child         = child_profile(parent, facts, facts_root);
  const std::string measured_on = detail(parent, "gpu_name");
  Derivation d{
      parent, child, opt.parent_profile,
      fmt::format("{} (measured {} on {})", parent.name, parent.provenance.date, measured_on),
      fmt::format("HBM {:g} TB/s here vs {:g} TB/s", child.hbm_bytes_per_s / 1e12, parent.hbm_bytes_per_s / 1e12)};
  const std::string kept   = fmt::format("kept from {}: ", d.what);
  const std::string method = fmt::format(
      "same compute die ({} SMs): efficiencies (fractions of peak), host costs, sm_scaling, sm_tables, interference "
      "and other sections kept from the parent; peaks, HBM, capacity and links from the facts file; each table point "
      "t = t_parent - R_parent + R_this, R = the kernel's roofline max(flops / (peak x efficiency), bytes / (hbm x "
      "efficiency.memory)) with the parent's efficiencies (a point under R_parent: t_parent x R_this / R_parent); "
      "comm_kernel the same per payload byte (2 bytes of HBM traffic)",
      parent.sm_count);

  YAML::Emitter out;
  out.SetDoublePrecision(10);
  out << YAML::Comment(fmt::format(
      "{}: derived from the measured {} profile ({}) by `dbosim-calibrate derive` with the datasheet facts in {}. "
      "Generated: re-run the command in hwprofiles/README.md after re-measuring the parent, do not edit.",
      facts.gpu, parent.name, parent_label, facts_label));
  out << YAML::BeginMap;
  for (const auto& kv : base) {
    const std::string key = kv.first.as<std::string>();
    out << YAML::Key << key << YAML::Value;
    if (key == "name" || key == "gpu")
      out << facts.node[key];
    else if (key == "provenance") {
      write_derived_provenance(out, parent, parent_label, facts_label, method);
    } else if (std::find(kFactKeys.begin(), kFactKeys.end(), key) != kFactKeys.end())
      out << facts.node[key];
    else if (key == "host" || key == "efficiency" || key == "interference" || key == "sm_scaling")
      section_with_sources(out, kv.second, kept);
    else if (key == "tables")
      derived_tables(out, kv.second, d);
    else if (key == "comm_kernel")
      derived_comm_kernel(out, kv.second, d);
    else
      out << kv.second; // sm_tables and any section added later: verbatim
  }
  out << YAML::EndMap;
  if (!out.good())
    throw std::runtime_error("YAML emitter: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

void write_derived_profile(const DeriveOptions& options, const std::string& path)
{
  write_file_atomically(path, derived_profile_yaml(options));
}

} // namespace dbosim::calib

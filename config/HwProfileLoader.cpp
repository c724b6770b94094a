#include "config/HwProfileLoader.hpp"

#include "base/InputError.hpp"
#include "config/DataDir.hpp"
#include "config/FileMemo.hpp"
#include "config/YamlMap.hpp"
#include "models/OpTables.hpp"

#include <fmt/format.h>

#include <cctype>
#include <limits>

namespace dbosim {
namespace {
using models::HwProfile;

constexpr double kHuge = std::numeric_limits<double>::max();

/*** Sourced scalars: {value: V, source: "..."} ***/

/** @brief Reads `{value, source}` under `key`: `read_value(entry)` reads the value, the source is recorded. */
template <typename ReadValue>
auto sourced_entry(YamlMap& parent, const std::string& key, HwProfile& hw, ReadValue read_value)
{
  YamlMap entry              = parent.get_map(key);
  auto value                 = read_value(entry);
  hw.sources[entry.prefix()] = entry.get_string("source");
  entry.finish();
  return value;
}

/** @brief A quantity: a plain number (x plain_scale) or a unit string. */
double sourced(YamlMap& parent, const std::string& key, UnitKind kind, double plain_scale, double lo, double hi,
               HwProfile& hw)
{
  return sourced_entry(parent, key, hw, [&](YamlMap& e) { return e.get_quantity("value", kind, plain_scale, lo, hi); });
}

double sourced_number(YamlMap& parent, const std::string& key, double lo, double hi, HwProfile& hw)
{
  return sourced_entry(parent, key, hw, [&](YamlMap& e) { return e.get_double("value", lo, hi); });
}

int sourced_int(YamlMap& parent, const std::string& key, long lo, long hi, HwProfile& hw)
{
  return sourced_entry(parent, key, hw, [&](YamlMap& e) { return e.get_int("value", lo, hi); });
}

/** @brief A curve from two parallel lists; x strictly increasing. */
models::Curve read_curve(YamlMap& m, const std::string& x_key, const std::string& y_key, double y_lo, double y_hi,
                         double y_scale)
{
  models::Curve c;
  c.x = m.get_double_list(x_key, 0, kHuge);
  c.y = m.get_double_list(y_key, y_lo, y_hi);
  if (c.x.size() != c.y.size())
    m.fail(y_key, fmt::format("has {} values but {} has {}", c.y.size(), x_key, c.x.size()),
           fmt::format("one value per {}", x_key));
  for (size_t i = 1; i < c.x.size(); ++i)
    if (!(c.x[i] > c.x[i - 1]))
      m.fail(x_key, "must be strictly increasing");
  for (auto& y : c.y)
    y *= y_scale;
  c.source = m.get_string("source");
  return c;
}

/*** Sections ***/

void read_provenance(YamlMap& root, HwProfile& hw)
{
  YamlMap p          = root.get_map("provenance");
  hw.provenance.kind = p.get_enum("kind", {"datasheet", "measured", "derived"});
  hw.provenance.date = p.get_string("date");
  for (const auto& key : p.keys()) {
    if (key == "kind" || key == "date")
      continue;
    hw.provenance.details[key] = p.get_string(key);
  }
  if (hw.provenance.kind == "measured")
    for (const char* required : {"gpu_name", "sm_count", "driver", "cuda", "git_commit", "raw_results"})
      if (!hw.provenance.details.count(required))
        p.fail(required, "a measured profile must record its provenance",
               "gpu_name, sm_count, driver, cuda, "
               "git_commit, raw_results");
  if (hw.provenance.kind == "derived") // written by dbosim-calibrate derive from a measured parent
    for (const char* required : {"parent", "parent_date", "method"})
      if (!hw.provenance.details.count(required))
        p.fail(required, "a derived profile must record its parent and method", "parent, parent_date, method");
  p.finish();
}

/** @brief A measured profile must have been measured on the GPU it names: a profile measured on another GPU
 *  (copied to the wrong name) would silently carry the wrong tables. */
void check_measured_on_this_gpu(YamlMap& root, const HwProfile& hw)
{
  if (!hw.measured())
    return;
  auto upper = [](std::string t) {
    for (auto& c : t)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return t;
  };
  const std::string& gpu_name = hw.provenance.details.at("gpu_name");
  if (upper(gpu_name).find(upper(hw.name)) == std::string::npos)
    root.fail("provenance", fmt::format("profile '{}' was measured on '{}', another GPU", hw.name, gpu_name),
              fmt::format("a gpu_name containing '{}'", upper(hw.name)));
  if (hw.provenance.details.at("sm_count") != std::to_string(hw.sm_count))
    root.fail(
        "provenance",
        fmt::format("measured on {} SMs but the profile says {}", hw.provenance.details.at("sm_count"), hw.sm_count),
        std::to_string(hw.sm_count));
}

void read_peaks(YamlMap& root, HwProfile& hw)
{
  YamlMap peaks = root.get_map("peak_tflops");
  for (const auto& name : peaks.keys()) {
    models::DType t;
    if (!models::parse_dtype(name, t))
      peaks.fail(name, "unknown dtype", models::dtype_names());
    hw.peak_flops_per_s[t] = sourced(peaks, name, UnitKind::flops, 1e12, 1e12, 1e18, hw);
  }
  if (!hw.peak_flops_per_s.count(models::DType::bf16))
    peaks.fail("bf16", "required key is missing");
  peaks.finish();
}

void read_host(YamlMap& root, HwProfile& hw)
{
  YamlMap host              = root.get_map("host");
  hw.launch_cpu_us          = 1e6 * sourced(host, "launch_cpu", UnitKind::time, 1e-6, 0, 1e-2, hw);
  hw.graph_replay_kernel_us = 1e6 * sourced(host, "graph_replay_kernel", UnitKind::time, 1e-6, 0, 1e-2, hw);
  hw.event_us               = 1e6 * sourced(host, "event", UnitKind::time, 1e-6, 0, 1e-2, hw);
  hw.stream_sync_us         = 1e6 * sourced(host, "stream_sync", UnitKind::time, 1e-6, 0, 1e-1, hw);
  // Optional (measured by kernels/torch_graph_gaps.py): absent, the engine falls back and notes it.
  if (host.has("graph_launch"))
    hw.graph_launch_us = 1e6 * sourced(host, "graph_launch", UnitKind::time, 1e-6, 0, 1e-3, hw);
  if (host.has("eager_kernel_gap"))
    hw.eager_kernel_gap_us = 1e6 * sourced(host, "eager_kernel_gap", UnitKind::time, 1e-6, 0, 1e-4, hw);
  if (host.has("graph_piece_gap"))
    hw.graph_piece_gap_us = 1e6 * sourced(host, "graph_piece_gap", UnitKind::time, 1e-6, 0, 1e-4, hw);
  if (host.has("python_launch"))
    hw.python_launch_us = 1e6 * sourced(host, "python_launch", UnitKind::time, 1e-6, 0, 1e-3, hw);
  host.finish();
}

void read_efficiency(YamlMap& root, HwProfile& hw)
{
  YamlMap eff        = root.get_map("efficiency");
  hw.gemm_efficiency = sourced_number(eff, "gemm", 0.01, 1.0, hw);
  if (eff.has("gemm_fp8"))
    hw.gemm_fp8_efficiency = sourced_number(eff, "gemm_fp8", 0.01, 1.0, hw);
  if (eff.has("gemm_fp4"))
    hw.gemm_fp4_efficiency = sourced_number(eff, "gemm_fp4", 0.01, 1.0, hw);
  hw.attention_efficiency = sourced_number(eff, "attention", 0.01, 1.0, hw);
  hw.memory_efficiency    = sourced_number(eff, "memory", 0.01, 1.0, hw);
  eff.finish();
}

void read_sm_scaling(YamlMap& root, HwProfile& hw)
{
  if (!root.has("sm_scaling"))
    return;
  YamlMap all = root.get_map("sm_scaling");
  for (const auto& family : all.keys()) {
    YamlMap f = all.get_map(family);
    models::SmScaling s;
    s.retile = f.get_bool("retile");
    s.speed  = read_curve(f, "sms", "speed", 0.0, 2.0, 1.0);
    if (s.speed.x.back() > hw.sm_count)
      f.fail("sms", fmt::format("{:g} SMs exceed the GPU's {}", s.speed.x.back(), hw.sm_count),
             fmt::format("1..{}", hw.sm_count));
    f.finish();
    hw.sm_scaling[family] = std::move(s);
  }
  all.finish();
}

void read_interference(YamlMap& root, HwProfile& hw)
{
  if (!root.has("interference"))
    return;
  YamlMap all = root.get_map("interference");
  for (const auto& [key, member] : models::Interference::keys)
    if (all.has(key))
      hw.interference.*member = sourced_number(all, key, 1.0, 100.0, hw);
  all.finish();
}

/** @brief kernel_floors: {family: {value: time, source}}: a plain value is in microseconds. */
void read_kernel_floors(YamlMap& root, HwProfile& hw)
{
  if (!root.has("kernel_floors"))
    return;
  YamlMap all = root.get_map("kernel_floors");
  for (const auto& key : all.keys())
    hw.kernel_floor_us[key] = 1e6 * sourced(all, key, UnitKind::time, 1e-6, 0, 1e-3, hw);
  all.finish();
}

/** @brief platform: the serving stack's rules on this GPU; each {value, source}. */
void read_platform(YamlMap& root, HwProfile& hw)
{
  if (!root.has("platform"))
    return;
  YamlMap pl               = root.get_map("platform");
  hw.platform.stack        = sourced_entry(pl, "stack", hw, [](YamlMap& e) {
    return *models::platform_named(e.get_enum(
               "value", {models::platform_name(models::Platform::cuda), models::platform_name(models::Platform::rocm)}));
  });
  hw.platform.dbo_comm_sms = sourced_int(pl, "dbo_comm_sms", 0, hw.sm_count - 1, hw);
  hw.platform.deepep_ht_dbo_partition =
      sourced_entry(pl, "deepep_ht_dbo_partition", hw, [](YamlMap& e) { return e.get_bool("value"); });
  pl.finish();
}

void read_comm_kernel(YamlMap& root, HwProfile& hw)
{
  if (!root.has("comm_kernel"))
    return;
  YamlMap ck                        = root.get_map("comm_kernel");
  hw.comm_kernel_bytes_per_s_by_sms = read_curve(ck, "sms", "gbps", 0.0, 1e5, 1e9);
  ck.finish();
}

/** @brief A table entry's `dims:` map (positive integers, e.g. {k, n}). */
std::map<std::string, int> read_dims(YamlMap& entry)
{
  std::map<std::string, int> out;
  YamlMap dims = entry.get_map("dims");
  for (const auto& key : dims.keys())
    out[key] = dims.get_int(key, 1, 1L << 30);
  dims.finish();
  return out;
}

void read_tables(YamlMap& root, HwProfile& hw)
{
  if (!root.has("tables"))
    return;
  YAML::Node list = root.raw("tables");
  if (!list.IsSequence())
    root.fail("tables", "expected a list of tables");
  for (size_t i = 0; i < list.size(); ++i) {
    YamlMap t(list[i], root.file(), fmt::format("tables[{}]", i));
    models::OpTable table;
    table.family       = t.get_string("family");
    table.dims         = read_dims(t);
    table.us_by_tokens = read_curve(t, "tokens", "us", 0.0, 1e9, 1.0);
    if (table.us_by_tokens.x.front() < 1)
      t.fail("tokens", "tokens must be >= 1");
    if (t.has("beyond_last"))
      table.roofline_past_last = t.get_enum("beyond_last", {"scale", "roofline"}) == "roofline";
    t.finish();
    hw.tables.push_back(std::move(table));
  }
}

/** @brief Per-shape SM tables: a list of {family, dims, sms, tokens, speed, source}; one per (family, dims, sms). */
void read_sm_tables(YamlMap& root, HwProfile& hw)
{
  if (!root.has("sm_tables"))
    return;
  YAML::Node list = root.raw("sm_tables");
  if (!list.IsSequence())
    root.fail("sm_tables", "expected a list of per-shape SM tables");
  for (size_t i = 0; i < list.size(); ++i) {
    YamlMap t(list[i], root.file(), fmt::format("sm_tables[{}]", i));
    models::SmTable table;
    table.family          = t.get_string("family");
    table.dims            = read_dims(t);
    table.sms             = t.get_int("sms", 1, hw.sm_count);
    table.speed_by_tokens = read_curve(t, "tokens", "speed", 1e-3, 2.0, 1.0);
    if (table.speed_by_tokens.x.front() < 1)
      t.fail("tokens", "tokens must be >= 1");
    if (models::find_sm_table(hw, table.family, table.dims, table.sms))
      t.fail("sms",
             fmt::format("a second table for {} at {} SMs", models::table_key(table.family, table.dims), table.sms),
             "one table per family, dims and SM count");
    t.finish();
    hw.sm_tables.push_back(std::move(table));
  }
}

models::HwProfile parse_hw_profile(const std::string& path)
{
  YamlMap root(load_yaml_file(path), path, "");
  HwProfile hw;
  hw.name       = root.get_string("name");
  hw.gpu        = root.get_string("gpu");
  hw.generation = root.get_enum("generation", models::hw_generations(), "");
  read_provenance(root, hw);
  hw.sm_count = sourced_int(root, "sm_count", 1, 1024, hw);
  if (root.has("smem_per_sm")) // optional: bytes of shared memory per SM (what a copy CTA's reservation is against)
    hw.smem_bytes_per_sm = sourced_int(root, "smem_per_sm", 1024, 1 << 24, hw);
  read_peaks(root, hw);
  hw.hbm_bytes_per_s    = sourced(root, "hbm_bandwidth", UnitKind::bandwidth, 1e9, 1e9, 1e15, hw);
  hw.hbm_capacity_bytes = sourced(root, "hbm_capacity", UnitKind::bytes, 1e9, 1e9, 1e14, hw);
  hw.nvlink_bytes_per_s = sourced(root, "nvlink_bandwidth", UnitKind::bandwidth, 1e9, 1e9, 1e14, hw);
  hw.nvlink_latency_us  = 1e6 * sourced(root, "nvlink_latency", UnitKind::time, 1e-6, 0, 1e-3, hw);
  hw.nvlink_domain_size = sourced_int(root, "nvlink_domain_size", 1, 1024, hw);
  hw.nic_bytes_per_s    = sourced(root, "nic_bandwidth", UnitKind::bandwidth, 1e9 / 8, 1e8, 1e13, hw);
  hw.nic_latency_us     = 1e6 * sourced(root, "nic_latency", UnitKind::time, 1e-6, 0, 1e-3, hw);
  check_measured_on_this_gpu(root, hw);
  read_host(root, hw);
  read_efficiency(root, hw);
  read_sm_scaling(root, hw);
  read_interference(root, hw);
  read_kernel_floors(root, hw);
  read_comm_kernel(root, hw);
  read_platform(root, hw);
  read_tables(root, hw);
  models::index_tables(hw);
  read_sm_tables(root, hw);
  root.finish();
  return hw;
}

} // namespace

models::HwProfile load_hw_profile(const std::string& name_or_path)
{
  const std::string path = resolve_data_file("hwprofiles", name_or_path);
  static FileMemo<models::HwProfile> memo; // h200.yaml's measured tables are ~100 KB of YAML
  return memo.get(path, path, [&] { return parse_hw_profile(path); });
}

std::vector<std::string> list_hw_profiles() { return list_data_files("hwprofiles"); }

} // namespace dbosim

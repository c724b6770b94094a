#include "calibrate/ProfileWriter.hpp"

#include "calibrate/ResultsStore.hpp"
#include "calibrate/VerifyCheck.hpp"
#include "config/HwProfileLoader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

namespace dbosim::calib {
namespace {

/** @brief v rounded to `digits` significant digits (stable text, no float noise). */
double sig(double v, int digits = 5)
{
  if (v == 0 || !std::isfinite(v))
    return v;
  double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

void sourced(YAML::Emitter& out, const std::string& key, double value, const std::string& source)
{
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "value" << YAML::Value
      << sig(value) << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << source << YAML::EndMap;
}

void list(YAML::Emitter& out, const std::string& key, const std::vector<double>& v, int digits = 5)
{
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (double x : v)
    out << sig(x, digits);
  out << YAML::EndSeq;
}

/** The `family:` and flow-style `dims:` keys that open a measured or SM table entry. */
void family_and_dims(YAML::Emitter& out, const std::string& family, const std::map<std::string, int>& dims)
{
  out << YAML::Key << "family" << YAML::Value << family;
  out << YAML::Key << "dims" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : dims)
    out << YAML::Key << k << YAML::Value << v;
  out << YAML::EndMap;
}

std::string env(const FittedProfile& fit, const char* key)
{
  auto it = fit.env.find(key);
  return it == fit.env.end() ? "unknown" : it->second;
}

/** provenance: where, when and with what the records were measured, and the fit's inputs (what refit replays). */
void write_provenance(YAML::Emitter& out, const FittedProfile& fit, const WriterOptions& opt)
{
  const std::string date     = env(fit, "date").substr(0, 10);
  const std::string gpu_name = env(fit, "gpu_name");
  out << YAML::Key << "provenance" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << "measured";
  out << YAML::Key << "date" << YAML::Value << date;
  auto detail = [&](const std::string& k, const std::string& v) {
    out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
  };
  detail("gpu_name", gpu_name);
  detail("sm_count", env(fit, "sm_count"));
  detail("sm_clock_mhz",
         env(fit, "sm_clock_mhz") + " at start (max " + env(fit, "max_sm_clock_mhz") +
             "); during the measurements min " +
             (fit.clocks.count("sm_clock_mhz_min") ? fit.clocks.at("sm_clock_mhz_min") : "?") + ", median " +
             (fit.clocks.count("sm_clock_mhz_median") ? fit.clocks.at("sm_clock_mhz_median") : "?") + ", max " +
             (fit.clocks.count("sm_clock_mhz_max") ? fit.clocks.at("sm_clock_mhz_max") : "?"));
  detail("mem_clock_mhz", env(fit, "mem_clock_mhz") + " (max " + env(fit, "max_mem_clock_mhz") + ")");
  detail("driver", env(fit, "driver"));
  detail("cuda", env(fit, "cuda"));
  detail("cublas", env(fit, "cublas"));
  detail("cublaslt", env(fit, "cublaslt"));
  detail("nccl", env(fit, "nccl"));
  detail("git_commit", env(fit, "git_commit"));
  detail("raw_results", opt.raw_results);
  detail("measured_at", env(fit, "date"));
  detail("timing", env(fit, "timing"));
  detail("runs", std::to_string(fit.runs));
  if (!fit.last_run_date.empty() && fit.last_run_date != env(fit, "date"))
    detail("last_run_at", fit.last_run_date);
  detail("not_measured", "NCCL all-to-all and send/recv (one GPU: recorded as skipped); nvlink_*, nic_*, peaks and "
                         "capacity are datasheet values");
  if (!opt.verify_note.empty())
    detail("verification", opt.verify_note);
  for (const auto& [table, preferred] : fit.preferred_tables) { // e.g. mla_decode from FlashMLA, not the fastest
    const auto& used = preferred; // a structured binding cannot be captured by a lambda before C++20 (clang)
    auto info        = [&](const char* k) { return used.info.count(k) ? used.info.at(k) : std::string("?"); };
    detail(table + "_implementation",
           used.impl + " (raw family " + used.family + " in " + opt.raw_results + ", measured " + info("measured_at") +
               " on " + info("gpu") + ", torch " + info("torch") + ", CUDA " + info("cuda") +
               "): " + std::to_string(used.points) + " of " + std::to_string(used.total) +
               " points, taken even where another implementation measured faster (the kernel the serving engine runs)");
  }
  std::string families, skip_flags;
  for (const auto& f : opt.skip_families) {
    families += (families.empty() ? "" : ", ") + f;
    skip_flags += " --skip-family " + f;
  }
  if (!opt.skip_families.empty())
    detail("tables_left_out", families + " (measured, but left out of the fit with --skip-family; the roofline with "
                                         "the measured efficiencies applies to those kernels)");
  // What `dbosim-calibrate refit` replays: the fit's inputs, each as given on the command line.
  const std::string base_recorded = opt.base_recorded.empty() ? opt.base_profile : opt.base_recorded;
  detail("fit_base", base_recorded);
  if (!opt.base_label.empty())
    detail("fit_base_label", opt.base_label);
  if (!opt.verify_path.empty())
    detail("fit_verify", opt.verify_path);
  detail("fit_skip_families", families);
  detail("fit_command", "dbosim-calibrate fit --raw " + opt.raw_results +
                            (opt.verify_path.empty() ? "" : " --verify " + opt.verify_path) + " --base " +
                            base_recorded + skip_flags + " (then: dbosim-calibrate refit PROFILE)");
  out << YAML::EndMap;
}

/** host: the measured host costs, the base's where a cost was not measured. */
void write_host(YAML::Emitter& out, const FittedProfile& fit, YAML::Node& base)
{
  out << YAML::Key << "host" << YAML::Value << YAML::BeginMap;
  for (const char* key : {"launch_cpu", "graph_replay_kernel", "event", "stream_sync"}) {
    if (fit.host_us.count(key))
      sourced(out, key, fit.host_us.at(key).value, fit.host_us.at(key).source);
    else
      out << YAML::Key << key << YAML::Value << base["host"][key];
  }
  for (const char* key : {"graph_launch", "eager_kernel_gap", "graph_piece_gap", "python_launch"}) { // optional keys
    if (fit.host_us.count(key))
      sourced(out, key, fit.host_us.at(key).value, fit.host_us.at(key).source);
    else if (base["host"][key])
      out << YAML::Key << key << YAML::Value << base["host"][key];
  }
  out << YAML::EndMap;
}

/** efficiency: the best measured rates against the datasheet peaks, the base's where none was measured. */
void write_efficiency(YAML::Emitter& out, const FittedProfile& fit, YAML::Node& base, const models::HwProfile& hw)
{
  const double peak_bf16 = hw.peak_flops_per_s.at(models::DType::bf16) / 1e12;
  out << YAML::Key << "efficiency" << YAML::Value << YAML::BeginMap;
  auto eff = [&](const char* key, const FitScalar& best, double peak, const char* unit) {
    if (best.value <= 0) {
      out << YAML::Key << key << YAML::Value << base["efficiency"][key];
      return;
    }
    double e = std::min(1.0, best.value / peak);
    std::ostringstream src;
    src << "measured: best " << sig(best.value, 4) << " " << unit << " (" << best.source << ") / datasheet "
        << sig(peak, 4) << " " << unit;
    sourced(out, key, sig(e, 3), src.str());
  };
  eff("gemm", fit.best_bf16_tflops, peak_bf16, "TFLOP/s");
  if (fit.best_fp8_tflops.value > 0 && hw.peak_flops_per_s.count(models::DType::fp8))
    eff("gemm_fp8", fit.best_fp8_tflops, hw.peak_flops_per_s.at(models::DType::fp8) / 1e12, "TFLOP/s");
  eff("attention", fit.best_attention_tflops, peak_bf16, "TFLOP/s");
  eff("memory", fit.best_stream_gbps, hw.hbm_bytes_per_s / 1e9, "GB/s");
  out << YAML::EndMap;
}

/** The measured curves and factors: SM scaling, per-shape SM tables, interference, kernel floors, the comm kernel. */
void write_measured_curves(YAML::Emitter& out, const FittedProfile& fit)
{
  if (!fit.sm_scaling.empty()) {
    out << YAML::Key << "sm_scaling" << YAML::Value << YAML::BeginMap;
    for (const auto& [fam, c] : fit.sm_scaling) {
      out << YAML::Key << fam << YAML::Value << YAML::BeginMap;
      out << YAML::Key << "retile" << YAML::Value << c.retile;
      list(out, "sms", c.x);
      list(out, "speed", c.y, 3);
      out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << c.source;
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  if (!fit.sm_tables.empty()) {
    out << YAML::Key << "sm_tables" << YAML::Value << YAML::BeginSeq;
    for (const auto& t : fit.sm_tables) {
      out << YAML::BeginMap;
      family_and_dims(out, t.family, t.dims);
      out << YAML::Key << "sms" << YAML::Value << t.sms;
      list(out, "tokens", t.tokens, 9);
      list(out, "speed", t.speed, 3);
      out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << t.source;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!fit.interference.empty()) {
    out << YAML::Key << "interference" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, s] : fit.interference)
      sourced(out, key, sig(s.value, 3), s.source);
    out << YAML::EndMap;
  }
  if (!fit.kernel_floors.empty()) {
    out << YAML::Key << "kernel_floors" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, s] : fit.kernel_floors)
      sourced(out, key, sig(s.value, 3), s.source);
    out << YAML::EndMap;
  }
  if (!fit.comm_kernel_gbps.x.empty()) {
    out << YAML::Key << "comm_kernel" << YAML::Value << YAML::BeginMap;
    list(out, "sms", fit.comm_kernel_gbps.x);
    list(out, "gbps", fit.comm_kernel_gbps.y, 4);
    out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << fit.comm_kernel_gbps.source;
    out << YAML::EndMap;
  }
}

/** The duration tables, less the families left out. */
void write_tables(YAML::Emitter& out, const FittedProfile& fit, const WriterOptions& opt)
{
  if (!fit.tables.empty()) {
    out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
    for (const auto& t : fit.tables) {
      if (std::find(opt.skip_families.begin(), opt.skip_families.end(), t.family) != opt.skip_families.end())
        continue;
      out << YAML::BeginMap;
      family_and_dims(out, t.family, t.dims);
      list(out, "tokens", t.tokens, 9);
      list(out, "us", t.us, 4);
      out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << t.source;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
}

} // namespace

std::string profile_yaml(const FittedProfile& fit, const WriterOptions& opt)
{
  const models::HwProfile hw = load_hw_profile(opt.base_profile); // validates the base
  YAML::Node base            = YAML::LoadFile(opt.base_profile);
  const std::string gpu_name = env(fit, "gpu_name");
  const int sm_count         = std::stoi(env(fit, "sm_count"));

  YAML::Emitter out;
  out.SetDoublePrecision(10);
  out << YAML::Comment("Measured on " + gpu_name + " by calibrate/ (dbosim-calibrate-run, then dbosim-calibrate fit) " +
                       "from " + opt.raw_results + ". Peaks, capacity and links: datasheet, kept from " +
                       (opt.base_label.empty() ? opt.base_profile : opt.base_label) + ".");
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << base["name"].as<std::string>();
  out << YAML::Key << "gpu" << YAML::Value << base["gpu"].as<std::string>();
  if (base["generation"])
    out << YAML::Key << "generation" << YAML::Value << base["generation"].as<std::string>();

  write_provenance(out, fit, opt);

  sourced(out, "sm_count", sm_count, "measured: cudaGetDeviceProperties multiProcessorCount on " + gpu_name);
  if (base["smem_per_sm"]) // optional, kept from the base
    out << YAML::Key << "smem_per_sm" << YAML::Value << base["smem_per_sm"];
  for (const char* key : {"peak_tflops", "hbm_bandwidth", "hbm_capacity", "nvlink_bandwidth", "nvlink_latency",
                          "nvlink_domain_size", "nic_bandwidth", "nic_latency"})
    out << YAML::Key << key << YAML::Value << base[key];

  write_host(out, fit, base);
  write_efficiency(out, fit, base, hw);

  write_measured_curves(out, fit);
  write_tables(out, fit, opt);
  out << YAML::EndMap;
  if (!out.good())
    throw std::runtime_error("YAML emitter: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

void write_profile(const FittedProfile& fit, const WriterOptions& options, const std::string& path)
{
  write_file_atomically(path, profile_yaml(fit, options));
}

RecordedFit recorded_fit(const std::string& path)
{
  const YAML::Node prov = YAML::LoadFile(path)["provenance"];
  auto get              = [&](const char* key, bool required) {
    if (prov && prov[key] && prov[key].IsScalar())
      return prov[key].as<std::string>();
    if (required)
      throw std::runtime_error(path + ": provenance." + key +
                                            " is missing: the profile does not record the fit that wrote it (fit it again with "
                                                         "dbosim-calibrate fit)");
    return std::string();
  };
  RecordedFit f;
  f.raw             = get("raw_results", true);
  f.base            = get("fit_base", true);
  f.base_label      = get("fit_base_label", false);
  f.verify          = get("fit_verify", false);
  std::string skips = get("fit_skip_families", true);
  for (std::size_t at = 0; at < skips.size();) {
    std::size_t end = skips.find(", ", at);
    if (end == std::string::npos)
      end = skips.size();
    f.skip_families.push_back(skips.substr(at, end - at));
    at = end + 2;
  }
  return f;
}

RefitInputs refit_inputs(const std::string& path, const std::string& root)
{
  const RecordedFit rf = recorded_fit(path);
  auto resolve         = [&](const std::string& p) {
    if (p.empty() || std::filesystem::path(p).is_absolute() || std::filesystem::exists(p))
      return p;
    return (std::filesystem::path(root) / p).string();
  };
  RefitInputs in;
  in.records               = ResultsStore::read_file(resolve(rf.raw));
  in.options.base_profile  = resolve(rf.base);
  in.options.base_recorded = rf.base;
  in.options.base_label    = rf.base_label;
  in.options.raw_results   = rf.raw;
  in.options.skip_families = rf.skip_families;
  in.options.verify_path   = rf.verify;
  if (!rf.verify.empty())
    in.options.verify_note =
        "fresh pass in a separate process right after the run: " +
        verification_note(compare_verification(in.records, ResultsStore::read_file(resolve(rf.verify))));
  return in;
}

} // namespace dbosim::calib

#include "calibrate/ProfileWriter.hpp"

#include "calibrate/ResultsStore.hpp"
#include "config/HwProfileLoader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

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

} // namespace

std::string profile_yaml(const FittedProfile& fit, const WriterOptions& opt)
{
  const models::HwProfile hw = load_hw_profile(opt.base_profile); // validates the base
  YAML::Node base            = YAML::LoadFile(opt.base_profile);
  const std::string date     = env(fit, "date").substr(0, 10);
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
  detail("not_measured", "NCCL all-to-all and send/recv (one GPU: recorded as skipped); nvlink_*, nic_*, peaks and "
                         "capacity are datasheet values");
  if (!opt.verify_note.empty())
    detail("verification", opt.verify_note);
  if (!opt.skip_families.empty()) {
    std::string families;
    for (const auto& f : opt.skip_families)
      families += (families.empty() ? "" : ", ") + f;
    detail("tables_left_out", families + " (measured, but left out of the fit with --skip-family; the roofline with "
                                         "the measured efficiencies applies to those kernels)");
  }
  out << YAML::EndMap;

  sourced(out, "sm_count", sm_count, "measured: cudaGetDeviceProperties multiProcessorCount on " + gpu_name);
  for (const char* key : {"peak_tflops", "hbm_bandwidth", "hbm_capacity", "nvlink_bandwidth", "nvlink_latency",
                          "nvlink_domain_size", "nic_bandwidth", "nic_latency"})
    out << YAML::Key << key << YAML::Value << base[key];

  out << YAML::Key << "host" << YAML::Value << YAML::BeginMap;
  for (const char* key : {"launch_cpu", "graph_replay_kernel", "event", "stream_sync"}) {
    if (fit.host_us.count(key))
      sourced(out, key, fit.host_us.at(key).value, fit.host_us.at(key).source);
    else
      out << YAML::Key << key << YAML::Value << base["host"][key];
  }
  out << YAML::EndMap;

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
  eff("attention", fit.best_attention_tflops, peak_bf16, "TFLOP/s");
  eff("memory", fit.best_stream_gbps, hw.hbm_bytes_per_s / 1e9, "GB/s");
  out << YAML::EndMap;

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
  if (!fit.comm_kernel_gbps.x.empty()) {
    out << YAML::Key << "comm_kernel" << YAML::Value << YAML::BeginMap;
    list(out, "sms", fit.comm_kernel_gbps.x);
    list(out, "gbps", fit.comm_kernel_gbps.y, 4);
    out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << fit.comm_kernel_gbps.source;
    out << YAML::EndMap;
  }
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
  out << YAML::EndMap;
  if (!out.good())
    throw std::runtime_error("YAML emitter: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

void write_profile(const FittedProfile& fit, const WriterOptions& options, const std::string& path)
{
  write_file_atomically(path, profile_yaml(fit, options));
}

} // namespace dbosim::calib

#include "calibrate/ProfileFit.hpp"
#include "calibrate/Stats.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

namespace dbosim::calib {
namespace {

std::string fmt(double v, int digits = 3)
{
  std::ostringstream ss;
  ss.precision(digits);
  ss << v;
  return ss.str();
}

std::map<std::string, double> without(std::map<std::string, double> p, std::initializer_list<const char*> keys)
{
  for (const char* k : keys)
    p.erase(k);
  return p;
}

std::string dims_text(const std::map<std::string, double>& p)
{
  std::string s;
  for (const auto& [k, v] : p)
    s += (s.empty() ? "" : " ") + k + "=" + format_number(v);
  return s;
}

double extra(const Measurement& m, const char* key, double fallback = 0)
{
  auto it = m.extra.find(key);
  return it == m.extra.end() ? fallback : it->second;
}

} // namespace

std::string scaling_family(const std::string& f)
{
  if (f == "gemm_bf16" || f == "gemm_fp8" || f == "gemm_fp8_block_deepgemm")
    return "gemm";
  if (f == "grouped_gemm_bf16" || f == "grouped_gemm_fp8" || f == "grouped_gemm_fp8_deepgemm" ||
      f == "grouped_gemm_fp8_deepgemm_masked")
    return "grouped_gemm";
  if (f == "mla_decode" || f == "attention_prefill")
    return "attention";
  if (f == "rmsnorm" || f == "silu_mul")
    return "memory";
  return "";
}

std::vector<std::pair<std::string, std::vector<std::string>>> table_families()
{
  return {
      {"gemm_bf16", {"gemm_bf16", "gemm_bf16_torch"}},
      {"gemm_fp8", {"gemm_fp8"}},
      {"gemm_fp8_block", {"gemm_fp8_block", "gemm_fp8_block_deepgemm"}},
      {"grouped_gemm_bf16", {"grouped_gemm_bf16", "grouped_gemm_bf16_torch", "grouped_gemm_bf16_torch_masked"}},
      {"grouped_gemm_fp8",
       {"grouped_gemm_fp8", "grouped_gemm_fp8_torch", "grouped_gemm_fp8_deepgemm", "grouped_gemm_fp8_deepgemm_masked"}},
      {"grouped_gemm_bf16_skewed", {"grouped_gemm_bf16_skewed"}},
      {"grouped_gemm_fp8_skewed", {"grouped_gemm_fp8_skewed"}},
      {"mla_decode", {"mla_decode_flashmla", "mla_decode_triton", "mla_decode"}},
      {"head_bmm_bf16", {"head_bmm_bf16"}},
      {"attention_prefill", {"attention_prefill_sdpa", "attention_prefill"}},
      {"attention_prefill_ctx", {"attention_prefill_ctx"}},
      {"rmsnorm", {"rmsnorm"}},
      {"silu_mul", {"silu_mul"}},
  };
}

std::string preferred_family(const std::string& table_family)
{
  return table_family == "mla_decode" ? "mla_decode_flashmla" : "";
}

namespace {

/** The environment records: the first one's fields, the run count, the last date; its SM count. */
int read_environment(const std::vector<Measurement>& records, FittedProfile& fp)
{
  for (const auto& m : records)
    if (m.spec.family == "env") {
      if (fp.runs++ == 0)
        fp.env = m.info;
      if (m.info.count("date"))
        fp.last_run_date = m.info.at("date");
    }
  if (fp.runs == 0)
    throw std::runtime_error("the raw results hold no environment record (env/run=1)");
  const int sm_count = std::stoi(fp.env.count("sm_count") ? fp.env.at("sm_count") : "0");
  if (sm_count <= 0)
    throw std::runtime_error("the environment record has no sm_count");
  return sm_count;
}

/** A table's points: per dims (the spec's parameters but tokens), the measurement taken at each token count. */
using TableGroups = std::map<std::map<std::string, double>, std::map<double, const Measurement*>>;

/** The points of table `raw_families`: where several implementations were measured (attention), each point takes the
 *  fastest one, or the preferred implementation's where it has one. */
TableGroups table_points(const std::vector<Measurement>& records, const std::vector<std::string>& raw_families,
                         const std::string& preferred)
{
  TableGroups groups;
  for (const auto& raw_family : raw_families)
    for (const auto& m : records) {
      if (!m.ok() || m.reps == 0 || m.spec.family != raw_family || !m.spec.params.count("tokens"))
        continue;
      auto& slot           = groups[without(m.spec.params, {"tokens"})][m.spec.params.at("tokens")];
      const bool m_pref    = !preferred.empty() && m.spec.family == preferred;
      const bool slot_pref = slot && !preferred.empty() && slot->spec.family == preferred;
      if (!slot || (m_pref && !slot_pref) || (m_pref == slot_pref && m.us < slot->us))
        slot = &m;
    }
  return groups;
}

/** The implementation a measurement names, without its tuning details. */
std::string implementation_of(const Measurement& m)
{
  std::string impl = m.info.count("impl") ? m.info.at("impl") : m.spec.family;
  for (const char* cut : {" candidate=", " algo=", "; BLOCK_H=", "; checked", "; rows padded", " (rows padded"})
    if (auto at = impl.find(cut); at != std::string::npos)
      impl = impl.substr(0, at);
  return impl;
}

/** One duration table of family `name` at `dims`, its points sorted by tokens, its source naming the implementations
 *  that won its points; `used` counts what the preferred implementation supplied. */
FitTable duration_table(const std::string& name, const std::string& preferred,
                        const std::map<std::string, double>& dims,
                        const std::map<double, const Measurement*>& by_tokens, std::map<std::string, std::string>& env,
                        PreferredTable& used)
{
  FitTable t;
  t.family = name;
  for (const auto& [k, v] : dims)
    t.dims[k] = static_cast<int>(v);
  std::map<std::string, int> wins; // implementation -> points it is the fastest (or preferred) at
  std::set<std::string> dates;     // the points' own measurement dates (records that carry measured_at)
  int preferred_points = 0;
  for (const auto& [tokens, m] : by_tokens) {
    t.tokens.push_back(tokens);
    t.us.push_back(m->us);
    const std::string impl = implementation_of(*m);
    ++wins[impl];
    dates.insert(m->info.count("measured_at") ? m->info.at("measured_at").substr(0, 10) : "");
    if (m->spec.family == preferred) {
      ++preferred_points;
      used.impl = impl;
      used.info = m->info;
    }
  }
  used.points += preferred_points;
  used.total += static_cast<int>(by_tokens.size());
  std::string impls;
  for (const auto& [impl, n] : wins)
    impls += (impls.empty() ? "" : " | ") + (wins.size() > 1 ? std::to_string(n) + " points: " : "") + impl;
  const std::string date = dates.size() == 1 && !dates.begin()->empty() ? *dates.begin() : env["date"].substr(0, 10);
  const char* mix        = wins.size() <= 1   ? ""
                           : preferred_points ? "the preferred implementation where measured, else the fastest: "
                                              : "fastest per point of ";
  t.source = "measured " + date + " on " + env["gpu_name"] + ": " + mix + impls + "; median of repeats, cold L2";
  return t;
}

/** Duration tables: one per (family, dims), points sorted by tokens. */
void fit_duration_tables(const std::vector<Measurement>& records, FittedProfile& fp)
{
  for (const auto& [name, raw_families] : table_families()) {
    const std::string preferred = preferred_family(name);
    PreferredTable used{preferred, "", {}, 0, 0}; // what the preferred implementation supplied to this table
    for (auto& [dims, by_tokens] : table_points(records, raw_families, preferred))
      fp.tables.push_back(duration_table(name, preferred, dims, by_tokens, fp.env, used));
    if (used.points > 0)
      fp.preferred_tables[name] = std::move(used);
  }
}

/** The SM-scaling records of each scaling family: per SM count the kernels' speeds t(full GPU) / t(S SMs). */
struct ScalingSamples {
  std::map<std::string, std::map<int, std::vector<double>>> speeds;
  std::map<std::string, std::set<std::string>> members;
  std::map<std::string, bool> retile;
  std::set<std::string> from_deepgemm;
};

ScalingSamples scaling_samples(const std::vector<Measurement>& records, int sm_count)
{
  ScalingSamples out;
  std::map<std::string, std::map<std::string, double>> base; // family -> kernel key -> us at full GPU
  for (const auto& m : records)
    if (m.ok() && m.spec.family == "sm_scaling" && static_cast<int>(extra(m, "actual_sms")) >= sm_count)
      base[m.spec.variant][MeasureSpec{m.spec.variant, "", without(m.spec.params, {"sms"})}.key()] = m.us;
  // Where a family has DeepGEMM records (kernels/deepgemm_sm_scaling.py: the kernels serving engines run, given their
  // SM count by set_num_sms), its curve comes from them alone; the cuBLAS green-context records otherwise.
  auto deepgemm = [](const std::string& variant) { return variant.find("_deepgemm") != std::string::npos; };
  for (const auto& m : records)
    if (m.ok() && m.spec.family == "sm_scaling" && deepgemm(m.spec.variant) && !scaling_family(m.spec.variant).empty())
      out.from_deepgemm.insert(scaling_family(m.spec.variant));
  for (const auto& m : records) {
    if (!m.ok() || m.spec.family != "sm_scaling")
      continue;
    const std::string fam = scaling_family(m.spec.variant);
    if (out.from_deepgemm.count(fam) && !deepgemm(m.spec.variant))
      continue;
    const std::string k = MeasureSpec{m.spec.variant, "", without(m.spec.params, {"sms"})}.key();
    auto b              = base[m.spec.variant].find(k);
    if (fam.empty() || b == base[m.spec.variant].end())
      continue;
    out.speeds[fam][static_cast<int>(extra(m, "actual_sms"))].push_back(b->second / m.us);
    out.members[fam].insert(m.spec.variant + "{" + dims_text(without(m.spec.params, {"sms"})) + "}");
    out.retile[fam] = extra(m, "retile") > 0;
  }
  return out;
}

/** SM scaling: speed(S) = t(full GPU) / t(S SMs) per kernel, median over the kernels of a family. */
void fit_sm_scaling(const std::vector<Measurement>& records, int sm_count, FittedProfile& fp)
{
  ScalingSamples sc = scaling_samples(records, sm_count);
  for (const auto& [fam, by_sms] : sc.speeds) {
    FitCurve c;
    c.retile  = sc.retile[fam];
    double lo = 1e9, hi = 0;
    for (const auto& [sms, v] : by_sms) {
      c.x.push_back(sms);
      c.y.push_back(sms >= sm_count ? 1.0 : median(v));
      for (double s : v)
        if (sms < sm_count) {
          lo = std::min(lo, s);
          hi = std::max(hi, s);
        }
    }
    std::string list;
    for (const auto& s : sc.members[fam])
      list += (list.empty() ? "" : ", ") + s;
    c.source =
        sc.from_deepgemm.count(fam)
            ? "measured with DeepGEMM given S SMs (deep_gemm.set_num_sms: a grid of S CTAs on the whole GPU, its "
              "block shape re-chosen for S; kernels/deepgemm_sm_scaling.py): median over " +
                  std::to_string(sc.members[fam].size()) + " kernels of t(" + std::to_string(sm_count) +
                  " SMs)/t(S SMs), per-kernel speeds " + fmt(lo) + ".." + fmt(hi) + ". Kernels: " + list
            : "measured on green contexts (cuGreenCtxCreate): median over " + std::to_string(sc.members[fam].size()) +
                  " kernels of t(" + std::to_string(sm_count) + " SMs)/t(S SMs), per-kernel speeds " + fmt(lo) + ".." +
                  fmt(hi) + (c.retile ? "; cuBLAS told the SM count (SM-count target)" : "; fixed grids") +
                  ". Kernels: " + list;
    fp.sm_scaling[fam] = std::move(c);
  }
}

/** Interference: slowdown of compute beside the comm-like copy kernel, and of the comm kernel beside compute. */
void fit_interference(const std::vector<Measurement>& records, FittedProfile& fp)
{
  std::map<std::string, std::vector<double>> slow;
  std::map<std::string, std::vector<std::string>> slow_what;
  for (const auto& m : records) {
    if (!m.ok() || m.spec.family != "interference" || extra(m, "overlap_ok") <= 0)
      continue;
    const bool part       = m.spec.params.count("partitioned") && m.spec.params.at("partitioned") > 0;
    const std::string sfx = part ? "_partitioned" : "";
    slow["compute_with_comm" + sfx].push_back(extra(m, "slowdown"));
    slow_what["compute_with_comm" + sfx].push_back(m.spec.variant + "@" + format_number(m.spec.params.at("comm_ctas")) +
                                                   "ctas=" + fmt(extra(m, "slowdown")));
    const double cg = extra(m, "comm_gbps_with");
    if (cg > 0) {
      slow["comm_with_compute" + sfx].push_back(extra(m, "comm_gbps_alone") / cg);
      slow_what["comm_with_compute" + sfx].push_back(m.spec.variant + "@" +
                                                     format_number(m.spec.params.at("comm_ctas")) +
                                                     "ctas=" + fmt(extra(m, "comm_gbps_alone") / cg));
    }
  }
  for (auto& [key, v] : slow) {
    double med = median(v);
    std::string list;
    for (const auto& s : slow_what[key])
      list += (list.empty() ? "" : ", ") + s;
    const bool comm_side = key.rfind("comm_with", 0) == 0;
    std::string what     = comm_side ? "comm-kernel bandwidth alone / beside compute (lower bound: the comm kernel "
                                       "outlasts the compute repeats)"
                                     : "compute time beside the copy kernel / alone";
    what += key.find("partitioned") != std::string::npos
                ? " on disjoint green-context partitions (the same partition alone)"
                : " sharing all SMs (two streams)";
    fp.interference[key] = {std::max(1.0, med), "measured: median " + what + " over " + std::to_string(v.size()) +
                                                    " cases (" + list + ")" + (med < 1.0 ? "; clamped at 1" : "")};
  }
}

/** The comm-like copy kernel: payload bandwidth vs CTAs (one CTA per SM up to the SM count). */
void fit_comm_kernel(const std::vector<Measurement>& records, int sm_count, FittedProfile& fp)
{
  std::vector<std::pair<double, double>> ck;
  for (const auto& m : records)
    if (m.ok() && m.spec.family == "copy_kernel" && m.spec.params.at("ctas") <= sm_count)
      ck.push_back({m.spec.params.at("ctas"), extra(m, "gbps")});
  std::sort(ck.begin(), ck.end());
  for (const auto& [c, g] : ck) {
    fp.comm_kernel_gbps.x.push_back(c);
    fp.comm_kernel_gbps.y.push_back(g);
  }
  fp.comm_kernel_gbps.source = "measured: SM-resident copy kernel (1024 threads per CTA, 16-byte accesses, 1 GiB), "
                               "payload bytes copied per second; HBM traffic is twice that";
}

/** Host costs: launch, event, stream synchronize, the graph's per-kernel gap. */
void fit_host_costs(const std::vector<Measurement>& records, FittedProfile& fp)
{
  std::map<std::string, const Measurement*> host;
  for (const auto& m : records)
    if (m.ok() && m.spec.family == "host")
      host[m.spec.variant] = &m;
  auto host_value = [&](const char* key, const char* variant, const std::string& what) {
    if (!host.count(variant))
      return;
    const Measurement& m = *host.at(variant);
    fp.host_us[key] = {m.us, "measured: " + what + ", median of " + std::to_string(m.reps) + " (p10 " + fmt(m.us_p10) +
                                 ", p90 " + fmt(m.us_p90) + " us)"};
  };
  host_value("launch_cpu", "launch", "host time of one empty-kernel launch (batches of 100)");
  host_value("graph_replay_kernel", "graph_kernel",
             "GPU time per kernel inside a CUDA-graph replay ((101 kernels - 1 kernel) / 100)");
  host_value("event", "event_record",
             "host time of cudaEventRecord" +
                 (host.count("stream_wait_event")
                      ? " (cudaStreamWaitEvent: " + fmt(host.at("stream_wait_event")->us) + " us)"
                      : std::string()));
  host_value("stream_sync", "stream_sync",
             "cudaStreamSynchronize on an idle stream" +
                 (host.count("launch_sync_roundtrip")
                      ? " (launch + synchronize round trip: " + fmt(host.at("launch_sync_roundtrip")->us) + " us)"
                      : std::string()));
}

/** The gaps of eager, graph and piecewise issue (kernels/torch_graph_gaps.py): each the median over every
 *  record of its variant (runs and graph sizes pooled), the spread in the source. */
void fit_issue_gaps(const std::vector<Measurement>& records, FittedProfile& fp)
{
  auto pooled = [&](const std::string& variant, double& lo, double& hi, int& n) {
    std::vector<double> v;
    for (const auto& m : records)
      if (m.ok() && m.spec.family == "host" && m.spec.variant == variant)
        v.push_back(m.us);
    n = static_cast<int>(v.size());
    if (v.empty())
      return -1.0;
    std::sort(v.begin(), v.end());
    lo = v.front();
    hi = v.back();
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  const std::string gaps_script = " (kernels/torch_graph_gaps.py, PyTorch)";
  double lo = 0, hi = 0, lo2 = 0, hi2 = 0;
  int n = 0, n2 = 0;
  if (const double launch = pooled("graph_launch_cpu", lo, hi, n); launch >= 0)
    fp.host_us["graph_launch"] = {launch, "measured: host time of one torch.cuda.CUDAGraph.replay() (cudaGraphLaunch) "
                                          "of a 1-32-kernel graph, the GPU busy" +
                                              gaps_script + ": median of " + std::to_string(n) + " records (" +
                                              fmt(lo) + ".." + fmt(hi) + " us)"};
  const double eager = pooled("eager_gpu_empty", lo, hi, n), graph = pooled("graph_gpu_empty", lo2, hi2, n2);
  if (eager >= 0 && graph >= 0 && fp.host_us.count("graph_replay_kernel"))
    fp.host_us["eager_kernel_gap"] = {
        fp.host_us.at("graph_replay_kernel").value + eager - graph,
        "measured: graph_replay_kernel + (GPU time per eager kernel queued ahead of the GPU " + fmt(eager) +
            " us - per kernel inside one graph " + fmt(graph) + " us, the same near-empty kernel, medians of " +
            std::to_string(n) + " and " + std::to_string(n2) + " records" + gaps_script + ")"};
  if (const double piece = pooled("piece_gap_empty", lo, hi, n); piece >= 0) {
    std::string check;
    if (const double mixed = pooled("piece_eager_gap_empty", lo2, hi2, n2); mixed >= 0 && eager >= 0 && graph >= 0)
      check = "; a graph -> eager kernel -> graph boundary measured " + fmt(mixed) + " us, the model's eager - graph " +
              "gap + piece gap gives " + fmt(eager - graph + piece) + " us";
    fp.host_us["graph_piece_gap"] = {piece, "measured: GPU gap a graph boundary adds, graphs of 8 near-empty kernels "
                                            "replayed back to back against one graph of all their kernels" +
                                                gaps_script + ": median of " + std::to_string(n) + " records (" +
                                                fmt(lo) + ".." + fmt(hi) + " us)" + check};
  }
}

/** Kernel floors: a tiny kernel's per-launch time, 100 back to back in one CUDA graph, less the graph's
 *  per-kernel gap (the engine adds that gap to every kernel itself). */
void fit_kernel_floors(const std::vector<Measurement>& records, FittedProfile& fp)
{
  const double gap_us = fp.host_us.count("graph_replay_kernel") ? fp.host_us.at("graph_replay_kernel").value : 0;
  for (const auto& m : records) {
    if (!m.ok() || m.spec.family != "kernel_floor" || m.spec.variant == "empty")
      continue;
    const std::string impl           = m.info.count("impl") ? m.info.at("impl") : "";
    const double kernels             = std::max(1.0, extra(m, "kernels", 1));
    fp.kernel_floors[m.spec.variant] = {std::max(0.0, m.us / kernels - gap_us),
                                        "measured: " + fmt(m.us) + " us per call of " + fmt(kernels) + " kernel(s) (" +
                                            impl + "), per kernel less the graph gap " + fmt(gap_us) + " us"};
  }
}

/** Best rates (for the roofline efficiencies). */
void fit_best_rates(const std::vector<Measurement>& records, FittedProfile& fp)
{
  auto best = [&](std::initializer_list<const char*> families, const char* key, FitScalar& out) {
    for (const auto& m : records)
      for (const char* f : families)
        if (m.ok() && m.spec.family == f && extra(m, key) > out.value)
          out = {extra(m, key), m.spec.key()};
  };
  best({"gemm_bf16", "grouped_gemm_bf16"}, "tflops", fp.best_bf16_tflops);
  best({"gemm_fp8", "grouped_gemm_fp8"}, "tflops", fp.best_fp8_tflops);
  best({"attention_prefill_sdpa", "attention_prefill", "mla_decode", "mla_decode_triton"}, "tflops",
       fp.best_attention_tflops);
  best({"gemm_bf16", "gemm_fp8", "grouped_gemm_bf16", "grouped_gemm_fp8", "rmsnorm", "silu_mul", "mla_decode"}, "gbps",
       fp.best_stream_gbps);
  for (const auto& m : records)
    if (m.ok() && m.spec.family == "copy_kernel" && extra(m, "gbps_rw") > fp.best_stream_gbps.value)
      fp.best_stream_gbps = {extra(m, "gbps_rw"), m.spec.key() + " (read + write)"};
}

/** The SM clock: min, median and max over the measurements that report it. */
void fit_clocks(const std::vector<Measurement>& records, FittedProfile& fp)
{
  std::vector<double> clocks;
  for (const auto& m : records)
    if (m.ok() && m.extra.count("sm_clock_mhz") && m.extra.at("sm_clock_mhz") > 0)
      clocks.push_back(m.extra.at("sm_clock_mhz"));
  if (!clocks.empty()) {
    std::sort(clocks.begin(), clocks.end());
    fp.clocks["sm_clock_mhz_min"]    = format_number(clocks.front());
    fp.clocks["sm_clock_mhz_median"] = format_number(median(clocks));
    fp.clocks["sm_clock_mhz_max"]    = format_number(clocks.back());
  }
}

} // namespace

FittedProfile fit_profile(const std::vector<Measurement>& records)
{
  FittedProfile fp;
  const int sm_count = read_environment(records, fp);
  fit_duration_tables(records, fp);
  fit_sm_scaling(records, sm_count, fp);
  fp.sm_tables = fit_sm_tables(records, sm_count);
  fit_interference(records, fp);
  fit_comm_kernel(records, sm_count, fp);
  fit_host_costs(records, fp);
  fit_issue_gaps(records, fp);
  fit_kernel_floors(records, fp);
  fit_best_rates(records, fp);
  fit_clocks(records, fp);
  return fp;
}

} // namespace dbosim::calib

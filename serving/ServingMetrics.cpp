#include "serving/ServingMetrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

namespace dbosim::serving {

using json = nlohmann::ordered_json;

double percentile(std::vector<double> v, double pct)
{
  std::sort(v.begin(), v.end());
  return percentile_of_sorted(v, pct);
}

double percentile_of_sorted(const std::vector<double>& v, double pct)
{
  if (v.empty())
    return 0;
  const double rank    = pct / 100.0 * double(v.size() - 1);
  const auto lo        = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - double(lo));
}

namespace {

/** mean, median, std, p90, p99 of `v` (seconds) as `<stat>_<name>_ms`, vLLM's keys (add_gap_stats: the same of
 *  the gaps, in the same order and arithmetic). */
void add_stats(json& out, const std::string& name, const std::vector<double>& v_s)
{
  std::vector<double> ms(v_s.size());
  std::transform(v_s.begin(), v_s.end(), ms.begin(), [](double s) { return s * 1e3; });
  const double mean = ms.empty() ? 0 : std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
  double var        = 0;
  for (double x : ms)
    var += (x - mean) * (x - mean);
  out["mean_" + name + "_ms"] = mean;
  std::sort(ms.begin(), ms.end()); // once for the three percentiles (a run's ITLs are every token's gap)
  out["median_" + name + "_ms"] = percentile_of_sorted(ms, 50);
  out["std_" + name + "_ms"]    = ms.empty() ? 0 : std::sqrt(var / double(ms.size()));
  out["p90_" + name + "_ms"]    = percentile_of_sorted(ms, 90);
  out["p99_" + name + "_ms"]    = percentile_of_sorted(ms, 99);
}

void add_gap_stats(json& out, const std::string& name, const GapStats& g)
{
  out["mean_" + name + "_ms"]   = g.mean_ms;
  out["median_" + name + "_ms"] = g.ms.percentile(50);
  out["std_" + name + "_ms"]    = g.std_ms;
  out["p90_" + name + "_ms"]    = g.ms.percentile(90);
  out["p99_" + name + "_ms"]    = g.ms.percentile(99);
}

double tpot_s(const LiveRequest& l)
{
  return l.req->output_len > 1 ? (l.finish_s - l.first_token_s) / (l.req->output_len - 1) : 0;
}

} // namespace

std::vector<double> itl_gaps_s(const LiveRequest& l, const StepClock& clock)
{
  std::vector<double> v;
  l.tokens.for_each_gap(clock, [&](double gap_s) { v.push_back(gap_s); });
  return v;
}

GapStats itl_stats(const ServingResult& r)
{
  GapStats g;
  // Two passes over the gaps in request order, as add_stats goes over the list: the sum, then the squared deviations.
  double sum = 0;
  long n     = 0;
  for (const LiveRequest& l : r.live)
    l.tokens.for_each_gap(r.clock, [&](double gap_s) {
      const double ms = gap_s * 1e3;
      sum += ms;
      ++n;
    });
  g.mean_ms  = n == 0 ? 0 : sum / double(n);
  double var = 0;
  for (const LiveRequest& l : r.live)
    l.tokens.for_each_gap(r.clock, [&](double gap_s) {
      const double ms = gap_s * 1e3;
      var += (ms - g.mean_ms) * (ms - g.mean_ms);
    });
  g.std_ms = n == 0 ? 0 : std::sqrt(var / double(n));
  g.ms     = gap_sample(
          r.clock, r.live, [](const LiveRequest& l) -> const TokenTimes& { return l.tokens; }, 1e3);
  return g;
}

double mean_requests_in_system(const ServingResult& r)
{
  double area = 0, first = 1e300, last = 0;
  for (const LiveRequest& l : r.live) {
    area += l.finish_s - l.send_s;
    first = std::min(first, l.send_s);
    last  = std::max(last, l.finish_s);
  }
  return last > first ? area / (last - first) : 0;
}

json itl_split(const ServingResult& r)
{
  ItlSplit sum;
  double gaps_s = 0, clock_s = 0;
  long gaps = 0;
  for (const LiveRequest& l : r.live) {
    sum += l.itl_split;
    double own_s = 0; // the request's gaps summed in order, then added to the run's
    l.tokens.for_each_gap(r.clock, [&](double gap_s) { own_s += gap_s; });
    gaps_s += own_s;
    gaps += l.tokens.gaps();
    clock_s = std::max(clock_s, std::abs(l.finish_s));
  }
  const double per_ms = gaps > 0 ? 1e3 / double(gaps) : 0;
  // What the steps do not explain: a disaggregated request's KV hand-over and its wait to join a decode rank
  // (colocated: rounding only, clamped at 0). A gap is a difference of two clock readings, each a sum of step times
  // rounded at the clock's magnitude: at a slow request rate (arrivals 1e9 s apart) that rounding, a few ulps of the
  // clock per gap, outweighs the relative bound.
  double other_ms          = (gaps_s - sum.total_s()) * per_ms;
  const double rounding_ms = 4 * std::numeric_limits<double>::epsilon() * clock_s * 1e3;
  if (std::abs(other_ms) < std::max(1e-6 * std::max(1.0, gaps_s * per_ms), rounding_ms))
    other_ms = 0;
  json s;
  s["mean_itl_ms"]       = gaps_s * per_ms;
  s["layers_ms"]         = sum.layers_s * per_ms;
  s["step_work_ms"]      = sum.step_work_s * per_ms;
  s["straggler_spin_ms"] = (sum.attention_spin_s + sum.expert_spin_s) * per_ms;
  s["attention_spin_ms"] = sum.attention_spin_s * per_ms;
  s["expert_spin_ms"]    = sum.expert_spin_s * per_ms;
  s["draft_ms"]          = sum.draft_s * per_ms;
  s["other_ms"]          = other_ms;
  return s;
}

ServingSamples serving_samples(const ServingResult& r)
{
  ServingSamples s;
  double first = 1e300, last = 0;
  for (const LiveRequest& l : r.live) {
    s.ttft_s.push_back(l.first_token_s - l.send_s);
    if (l.req->output_len > 1)
      s.tpot_s.push_back(tpot_s(l));
    s.e2el_s.push_back(l.finish_s - l.send_s);
    s.total_input_tokens += l.req->input_len;
    s.total_output_tokens += l.req->output_len;
    first = std::min(first, l.send_s);
    last  = std::max(last, l.finish_s);
  }
  s.itl        = itl_stats(r);
  s.completed  = static_cast<long>(r.live.size());
  s.duration_s = r.live.empty() ? 0 : last - first;
  return s;
}

json serving_metrics(const ServingResult& r, int gpus)
{
  const ServingSamples s = serving_samples(r);
  const long in_tokens = s.total_input_tokens, out_tokens = s.total_output_tokens;
  const double duration = s.duration_s;
  const double per_s    = duration > 0 ? 1.0 / duration : 0;
  json m;
  m["completed"]              = r.live.size();
  m["total_input_tokens"]     = in_tokens;
  m["total_output_tokens"]    = out_tokens;
  m["duration"]               = duration;
  m["request_throughput"]     = double(r.live.size()) * per_s;
  m["output_throughput"]      = double(out_tokens) * per_s;
  m["total_token_throughput"] = double(in_tokens + out_tokens) * per_s;
  add_stats(m, "ttft", s.ttft_s);
  add_stats(m, "tpot", s.tpot_s);
  add_gap_stats(m, "itl", s.itl);
  add_stats(m, "e2el", s.e2el_s);
  m["output_throughput_per_gpu"]  = double(out_tokens) * per_s / gpus;
  const std::vector<double>& tpot = s.tpot_s;
  const double mean_tpot_s = tpot.empty() ? 0 : std::accumulate(tpot.begin(), tpot.end(), 0.0) / double(tpot.size());
  m["output_throughput_per_user"] = mean_tpot_s > 0 ? 1.0 / mean_tpot_s : 0;
  m["mean_requests_in_system"]    = mean_requests_in_system(r);
  m["itl_split"]                  = itl_split(r);
  m["num_steps"]                  = r.steps.size();
  m["preemptions"]                = r.preemptions;
  m["peak_kv_blocks"]             = r.peak_kv_blocks;
  // A workload with a shared prefix: vLLM's prefix-cache hit rate (hit tokens over queried prompt tokens).
  if (std::any_of(r.requests.begin(), r.requests.end(), [](const Request& q) { return q.prefix_len > 0; })) {
    m["prefix_cache_hit_tokens"] = r.prefix_hit_tokens;
    m["prefix_cache_hit_rate"] =
        r.prefix_queried_tokens > 0 ? double(r.prefix_hit_tokens) / double(r.prefix_queried_tokens) : 0.0;
  }
  return m;
}

std::string requests_csv(const ServingResult& r)
{
  std::string out = "id,rank,send_s,input_len,output_len,ttft_ms,tpot_ms,e2el_ms,preemptions\n";
  for (const LiveRequest& l : r.live)
    out += fmt::format("{},{},{:.9f},{},{},{:.6f},{:.6f},{:.6f},{}\n", l.req->id, l.rank, l.send_s, l.req->input_len,
                       l.req->output_len, (l.first_token_s - l.send_s) * 1e3, tpot_s(l) * 1e3,
                       (l.finish_s - l.send_s) * 1e3, l.preemptions);
  return out;
}

std::string steps_csv(const ServingResult& r)
{
  std::string out = "step,pool,start_s,step_us,host_gap_us,phase,tokens,batch,context_len,bucket_tokens,bucket_batch,"
                    "bucket_context_len,total_tokens,running,waiting,kv_blocks_used,preempted,ubatches,cuda_graph,"
                    "critical_rank,attention_spin_us,expert_spin_us,hot_rank_load,decode_tokens,decode_batch,"
                    "decode_context_len\n";
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const StepRecord& s = r.steps[i];
    out += fmt::format(
        "{},{},{:.9f},{:.3f},{:.3f},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.4f},{},{},{}\n", i,
        s.pool, s.start_s, s.step_us, s.host_gap_us, s.exact.phase == models::Phase::decode ? "decode" : "prefill",
        s.exact.tokens, s.exact.batch, s.exact.context_len, s.bucketed.tokens, s.bucketed.batch, s.bucketed.context_len,
        s.total_tokens, s.running, s.waiting, s.kv_blocks_used, s.preempted, s.ubatches, s.cuda_graph ? 1 : 0,
        s.critical_rank, s.attention_spin_us, s.expert_spin_us, s.hot_rank_load, s.exact.decode_tokens,
        s.exact.decode_batch, s.exact.decode_context_len);
  }
  return out;
}

std::string serving_text(const json& m)
{
  std::string out = "============ Serving Benchmark Result ============\n";
  auto line       = [&](const char* label, const std::string& v) { out += fmt::format("{:<40}{:>12}\n", label, v); };
  line("Successful requests:", fmt::format("{}", m["completed"].get<long>()));
  line("Benchmark duration (s):", fmt::format("{:.2f}", m["duration"].get<double>()));
  line("Total input tokens:", fmt::format("{}", m["total_input_tokens"].get<long>()));
  line("Total generated tokens:", fmt::format("{}", m["total_output_tokens"].get<long>()));
  line("Request throughput (req/s):", fmt::format("{:.2f}", m["request_throughput"].get<double>()));
  line("Output token throughput (tok/s):", fmt::format("{:.2f}", m["output_throughput"].get<double>()));
  line("Total token throughput (tok/s):", fmt::format("{:.2f}", m["total_token_throughput"].get<double>()));
  line("Output tok/s per GPU:", fmt::format("{:.2f}", m["output_throughput_per_gpu"].get<double>()));
  line("Output tok/s per user:", fmt::format("{:.2f}", m["output_throughput_per_user"].get<double>()));
  for (const char* name : {"ttft", "tpot", "itl", "e2el"}) {
    out += fmt::format("{:-^50}\n", fmt::format(" {} ", name));
    for (const char* stat : {"mean", "median", "p90", "p99"}) {
      const std::string key = fmt::format("{}_{}_ms", stat, name);
      line(fmt::format("{} {} (ms):", stat, name).c_str(), fmt::format("{:.2f}", m[key].get<double>()));
    }
  }
  if (m.contains("itl_split")) {
    const json& sp = m["itl_split"];
    out += fmt::format("{:-^50}\n", " mean itl split ");
    for (const auto& [label, key] :
         std::vector<std::pair<const char*, const char*>>{{"layers (ms):", "layers_ms"},
                                                          {"per-step work + host (ms):", "step_work_ms"},
                                                          {"straggler spin (ms):", "straggler_spin_ms"},
                                                          {"  attention / step work (ms):", "attention_spin_ms"},
                                                          {"  expert load (ms):", "expert_spin_ms"},
                                                          {"draft (MTP) (ms):", "draft_ms"},
                                                          {"other (KV hand-over) (ms):", "other_ms"}})
      line(label, fmt::format("{:.3f}", sp[key].get<double>()));
  }
  out += fmt::format("{:<40}{:>12}\n", "Preemptions:", m["preemptions"].get<long>());
  if (m.contains("prefix_cache_hit_rate"))
    out += fmt::format("{:<40}{:>12}\n", "Prefix cache hit rate (%):",
                       fmt::format("{:.2f}", 100.0 * m["prefix_cache_hit_rate"].get<double>()));
  out += "==================================================\n";
  return out;
}

} // namespace dbosim::serving

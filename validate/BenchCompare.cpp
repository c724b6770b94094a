#include "validate/BenchCompare.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <numeric>

namespace dbosim::validate {

namespace {

using json = nlohmann::ordered_json;

constexpr const char* group = "bench_serving";

const std::vector<double>& samples_s(const serving::ServingSamples& p, LatencyMetric m)
{
  switch (m) {
  case LatencyMetric::ttft:
    return p.ttft_s;
  case LatencyMetric::tpot:
    return p.tpot_s;
  case LatencyMetric::itl:
    break; // kept as GapStats (predicted_ms)
  case LatencyMetric::e2el:
    return p.e2el_s;
  }
  throw InternalError("samples_s: no such metric");
}

/** The statistic `s` of the simulated samples, in ms (0 for no sample, as numpy over vLLM's `or 0`). */
double predicted_ms(const serving::ServingSamples& p, const LatencyStat& s)
{
  if (s.metric == LatencyMetric::itl) // the gaps' own mean and exact percentiles, the same numbers as over a list
    return p.itl.ms.empty() ? 0 : s.percentile < 0 ? p.itl.mean_ms : p.itl.ms.percentile(s.percentile);
  std::vector<double> ms;
  for (double x : samples_s(p, s.metric))
    ms.push_back(x * 1e3);
  if (ms.empty())
    return 0;
  if (s.percentile < 0)
    return std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
  return serving::percentile(std::move(ms), s.percentile);
}

BenchWorkload workload(long requests, long input, long output)
{
  return {requests, requests > 0 ? double(input) / double(requests) : 0,
          requests > 0 ? double(output) / double(requests) : 0};
}

void check_length(const char* what, double measured, double predicted, std::vector<std::string>& warnings)
{
  if (measured <= 0 || std::abs(predicted - measured) / measured * 100 <= length_warning_pct)
    return;
  warnings.push_back(fmt::format("mean {} length: {:.1f} tokens per request measured, {:.1f} simulated (more than "
                                 "{:g}% apart): the runs served different requests; set workload.random_{}_len",
                                 what, measured, predicted, length_warning_pct, what));
}

} // namespace

BenchComparison compare_bench(const BenchResult& m, const serving::ServingSamples& p)
{
  BenchComparison c;
  const std::string name   = std::filesystem::path(m.file).stem().string();
  const std::string source = fmt::format("{} ({}, line {})", std::filesystem::path(m.file).filename().string(),
                                         bench_format_name(m.format), m.line);
  auto row                 = [&](const std::string& metric, const char* unit, double predicted, double measured) {
    CaseResult r;
    r.group     = group;
    r.name      = name;
    r.metric    = metric;
    r.unit      = unit;
    r.predicted = predicted;
    r.measured  = measured;
    r.source    = source;
    c.rows.push_back(std::move(r));
  };
  for (const LatencyStat& s : m.latencies) {
    const std::string metric = fmt::format("{} {}", latency_metric_label(s.metric), s.stat);
    if (s.ms == 0) { // vLLM and SGLang write 0 for a statistic without samples: nothing to compare
      c.skipped.push_back(fmt::format("{} ({} is 0: no samples)", metric, s.key));
      continue;
    }
    row(metric, "ms", predicted_ms(p, s), s.ms);
  }
  const double per_s = p.duration_s > 0 ? 1.0 / p.duration_s : 0;
  row("request throughput", "req/s", double(p.completed) * per_s, m.request_throughput);
  row("output throughput", "tok/s", double(p.total_output_tokens) * per_s, m.output_throughput);
  if (m.total_token_throughput)
    row("total throughput", "tok/s", double(p.total_input_tokens + p.total_output_tokens) * per_s,
        *m.total_token_throughput);

  if (m.concurrency) { // SGLang's definition: every request's E2E latency summed, over the duration
    double e2e_s = 0;
    for (double x : p.e2el_s)
      e2e_s += x;
    row("mean concurrency", "requests", e2e_s * per_s, *m.concurrency);
  }
  c.measured  = workload(m.completed, m.total_input_tokens, m.total_output_tokens);
  c.predicted = workload(p.completed, p.total_input_tokens, p.total_output_tokens);
  check_length("input", c.measured.input_per_request, c.predicted.input_per_request, c.warnings);
  check_length("output", c.measured.output_per_request, c.predicted.output_per_request, c.warnings);
  return c;
}

std::string comparison_text(const BenchComparison& c)
{
  std::string out =
      fmt::format("requests: {} measured (completed), {} simulated; mean tokens per request: input "
                  "{:.1f} measured, {:.1f} simulated; output {:.1f} measured, {:.1f} simulated\n",
                  c.measured.requests, c.predicted.requests, c.measured.input_per_request,
                  c.predicted.input_per_request, c.measured.output_per_request, c.predicted.output_per_request);
  for (const std::string& w : c.warnings)
    out += "warning: " + w + "\n";
  for (const std::string& s : c.skipped)
    out += "not compared: " + s + "\n";
  return out + "\n" + format_results(c.rows);
}

std::string bench_json(const BenchResult& m, const BenchScenario& s, const BenchComparison& c)
{
  json j;
  j["bench_result"] = {{"file", m.file},
                       {"line", m.line},
                       {"format", bench_format_name(m.format)},
                       {"format_from", m.format_given ? "--bench-format" : "fields"}};
  j["scenario"]     = {{"name", s.scenario.name}, {"file", s.written}};
  json settings     = json::array();
  for (const SettingSource& p : s.settings) {
    json one;
    one["key"]       = p.key;
    auto value       = [&](double v) { return p.integer ? json(static_cast<long>(v)) : json(v); };
    one["scenario"]  = p.scenario ? value(*p.scenario) : json(nullptr);
    one["bench"]     = p.bench ? value(*p.bench) : json(nullptr);
    one["bench_key"] = p.bench_key.empty() ? json(nullptr) : json(p.bench_key);
    one["used"]      = value(p.used);
    one["from"]      = setting_from_name(p.from);
    settings.push_back(one);
  }
  j["settings"] = settings;
  json warnings = json::array();
  for (const std::string& w : s.warnings)
    warnings.push_back(w);
  for (const std::string& w : c.warnings)
    warnings.push_back(w);
  j["warnings"]     = warnings;
  j["not_compared"] = c.skipped;
  auto load         = [](const BenchWorkload& w) {
    return json{{"requests", w.requests},
                {"input_tokens_per_request", w.input_per_request},
                {"output_tokens_per_request", w.output_per_request}};
  };
  j["workload"] = {{"measured", load(c.measured)}, {"predicted", load(c.predicted)}};
  json rows     = json::array();
  for (const CaseResult& r : c.rows)
    rows.push_back({{"group", r.group},
                    {"metric", r.metric},
                    {"unit", r.unit},
                    {"predicted", r.predicted},
                    {"measured", r.measured},
                    {"error_pct", r.error_pct()}});
  j["rows"] = rows;
  return j.dump(2) + "\n";
}

} // namespace dbosim::validate

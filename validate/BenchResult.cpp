#include "validate/BenchResult.hpp"

#include "base/InputError.hpp"
#include "config/InputFile.hpp"
#include "validate/JsonRecords.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cmath>

namespace dbosim::validate {

namespace {

using json = nlohmann::json;

constexpr const char* file_valid = "the JSON of `vllm bench serve --save-result`, or the JSON lines of `python -m "
                                   "sglang.bench_serving --output-file`";

/*** Fields ***/

class Fields {
public:
  Fields(const std::string& file, const JsonRecord& r) : file_(file), r_(r) {}
  /** The program whose file this is, once known: a missing field's message names it. */
  void set_writer(const char* writer) { writer_ = writer; }
  bool has(const std::string& key) const { return r_.value.contains(key); }
  const json& at(const std::string& key) const { return r_.value.at(key); }
  FieldAt where(const std::string& key) const
  {
    const auto it = r_.keys.find(key);
    return it == r_.keys.end() ? FieldAt{r_.line, 1} : it->second;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message, const std::string& valid) const
  {
    const FieldAt w = where(key);
    throw InputError(file_, w.line, w.col, key, message, valid);
  }
  /** A finite number >= lo (> lo when `open`). */
  double number(const std::string& key, double lo, bool open, const std::string& valid) const
  {
    if (!has(key))
      missing(key, valid);
    const json& v = at(key);
    not_a_word(key, v, valid);
    if (!v.is_number())
      fail(key, fmt::format("expected a number, got {}", v.dump()), valid);
    const double x = v.get<double>();
    if (x < 0)
      fail(key, fmt::format("{} is negative", v.dump()), valid);
    if (x < lo || (open && x == lo))
      fail(key, fmt::format("{} is out of range", v.dump()), valid);
    return x;
  }
  long integer(const std::string& key, long lo, const std::string& valid) const
  {
    if (!has(key))
      missing(key, valid);
    const json& v = at(key);
    not_a_word(key, v, valid);
    if (!v.is_number_integer())
      fail(key, fmt::format("expected an integer, got {}", v.dump()), valid);
    if (v.is_number_unsigned() ? v.get<unsigned long>() > static_cast<unsigned long>(LONG_MAX) : v.get<long>() < 0)
      fail(key, fmt::format("{} is {}", v.dump(), v.is_number_unsigned() ? "too large" : "negative"), valid);
    if (v.get<long>() < lo)
      fail(key, fmt::format("{} is out of range", v.dump()), valid);
    return v.get<long>();
  }
  [[noreturn]] void missing(const std::string& key, const std::string& valid) const
  {
    fail(key, fmt::format("missing ({} writes it)", writer_), valid);
  }
  /** Python's NaN and Infinity (quoted by scan) are not figures. */
  void not_a_word(const std::string& key, const json& v, const std::string& valid) const
  {
    if (v == "NaN")
      fail(key, "NaN is not a number", valid);
    if (v == "Infinity" || v == "-Infinity")
      fail(key, fmt::format("{} is not finite", v.get<std::string>()), valid);
  }
  /** An error about the record as a whole, at its first line. */
  [[noreturn]] void fail_record(const std::string& message, const std::string& valid) const
  {
    throw InputError(file_, r_.line, 1, "", message, valid);
  }
  const json& object() const { return r_.value; }

private:
  const std::string& file_;
  const JsonRecord& r_;
  std::string writer_ = "the benchmark";
};

/*** Formats ***/

struct FormatFields {
  BenchFormat format;
  const char* name;
  const char* writer;
  const char* e2e;                    ///< the metric name of end-to-end latency in its keys
  const char* total_throughput;       ///< its total token throughput key
  std::array<const char*, 5> markers; ///< keys only this format writes
};

const FormatFields format_table[] = {
    {.format           = BenchFormat::vllm,
     .name             = "vllm",
     .writer           = "vllm bench serve",
     .e2e              = "e2el",
     .total_throughput = "total_token_throughput",
     .markers          = {"total_token_throughput", "endpoint_type", "num_prompts", "burstiness", "mean_e2el_ms"}},
    {.format           = BenchFormat::sglang,
     .name             = "sglang",
     .writer           = "sglang.bench_serving",
     .e2e              = "e2e_latency",
     .total_throughput = "total_throughput",
     .markers = {"input_throughput", "total_throughput", "total_output_tokens_retokenized", "mean_e2e_latency_ms",
                 "median_e2e_latency_ms"}},
};

const FormatFields& fields_of(BenchFormat f)
{
  for (const FormatFields& t : format_table)
    if (t.format == f)
      return t;
  throw InternalError("bench result: a format without a row");
}

BenchFormat detect_format(const Fields& f)
{
  std::vector<std::string> seen;
  const FormatFields* found = nullptr;
  for (const FormatFields& t : format_table)
    for (const char* k : t.markers)
      if (f.has(k)) {
        seen.push_back(fmt::format("{} ({})", k, t.name));
        if (found != nullptr && found != &t)
          f.fail_record(fmt::format("fields of both formats: {}; give --bench-format", fmt::join(seen, ", ")),
                        "--bench-format vllm|sglang");
        found = &t;
      }
  if (found == nullptr)
    f.fail_record("not a benchmark result of vllm bench serve or sglang.bench_serving: none of their own fields "
                  "(total_token_throughput, num_prompts, ... or input_throughput, mean_e2e_latency_ms, ...)",
                  file_valid);
  return found->format;
}

/*** Latency keys ***/

/** `key` as `<stat>_<metric>_ms` of format `t`; empty when it is none. @throws via `f` on a bad percentile. */
std::optional<LatencyStat> latency_key(const Fields& f, const FormatFields& t, const std::string& key)
{
  const std::string ms = "_ms";
  if (key.size() <= ms.size() || key.compare(key.size() - ms.size(), ms.size(), ms) != 0)
    return std::nullopt;
  const std::string body  = key.substr(0, key.size() - ms.size());
  const std::size_t under = body.find('_');
  if (under == std::string::npos)
    return std::nullopt;
  const std::string stat = body.substr(0, under), name = body.substr(under + 1);
  const std::pair<const char*, LatencyMetric> metrics[] = {{"ttft", LatencyMetric::ttft},
                                                           {"tpot", LatencyMetric::tpot},
                                                           {"itl", LatencyMetric::itl},
                                                           {t.e2e, LatencyMetric::e2el}};
  const auto m = std::find_if(std::begin(metrics), std::end(metrics), [&](const auto& p) { return name == p.first; });
  if (m == std::end(metrics))
    return std::nullopt;
  LatencyStat s{m->second, stat, -1, 0, key};
  if (stat == "mean" || stat == "std")
    return s;
  if (stat == "median") {
    s.percentile = 50;
    return s;
  }
  if (stat.size() < 2 || stat[0] != 'p')
    return std::nullopt; // max_, min_: not compared
  const std::string digits = stat.substr(1);
  const bool number        = std::isdigit(static_cast<unsigned char>(digits.front())) != 0 &&
                      std::isdigit(static_cast<unsigned char>(digits.back())) != 0 &&
                      std::count(digits.begin(), digits.end(), '.') <= 1 &&
                      std::all_of(digits.begin(), digits.end(), [](char c) { return c == '.' || std::isdigit(c); });
  if (!number || std::stod(digits) > 100)
    f.fail(key, fmt::format("'{}' is not a percentile", stat), "pNN or pNN.N, NN from 0 to 100");
  s.percentile = std::stod(digits);
  return s;
}

/*** The fields of one record ***/

std::string nonnegative(const char* what) { return fmt::format("a finite number >= 0 ({})", what); }

void read_latencies(const Fields& f, const FormatFields& t, BenchResult& b)
{
  for (auto it = f.object().begin(); it != f.object().end(); ++it) {
    std::optional<LatencyStat> s = latency_key(f, t, it.key());
    if (!s)
      continue;
    s->ms = f.number(it.key(), 0, false, nonnegative("ms"));
    if (s->stat != "std") // the spread is not compared
      b.latencies.push_back(*s);
  }
  if (b.latencies.empty())
    f.fail_record("no latency figure",
                  fmt::format("mean_, median_ or pNN_ of ttft, tpot, itl or {}, in ms (`<stat>_<metric>_ms`)", t.e2e));
  std::stable_sort(b.latencies.begin(), b.latencies.end(), [](const LatencyStat& a, const LatencyStat& c) {
    return a.metric != c.metric ? a.metric < c.metric : a.percentile < c.percentile;
  });
}

/** max_concurrency: an integer >= 1, or null (no cap: 0). */
void read_concurrency(const Fields& f, BenchResult& b)
{
  const std::string key = "max_concurrency";
  if (!f.has(key))
    return;
  b.max_concurrency.key = key;
  b.max_concurrency.at  = f.where(key);
  b.max_concurrency.value =
      f.at(key).is_null() ? 0L : f.integer(key, 1, "an integer >= 1, or null (no cap on requests in flight)");
}

/** request_rate: a number > 0 (req/s), or unbounded: vLLM's "inf", Python's Infinity; SGLang's "trace" (arrival times
 *  of a trace) is not a rate. */
void read_rate(const Fields& f, BenchResult& b)
{
  const std::string key = "request_rate";
  if (!f.has(key))
    return;
  const json& v      = f.at(key);
  b.request_rate.key = key;
  b.request_rate.at  = f.where(key);
  if (v == "inf" || v == "Infinity") {
    b.request_rate.value = 0.0;
    return;
  }
  if (v == "trace") {
    b.notes.push_back("request_rate \"trace\": the measured run replayed a trace's arrival times, which the bench "
                      "file does not hold; the scenario's arrivals are simulated");
    return;
  }
  const std::string valid = "a number > 0 (req/s), \"inf\" or Infinity";
  if (v.is_string() && v != "NaN" && v != "-Infinity")
    f.fail(key, fmt::format("expected a number, got {}", v.dump()), valid);
  b.request_rate.value = f.number(key, 0, true, valid);
}

void read_settings(const Fields& f, const FormatFields& t, BenchResult& b)
{
  read_concurrency(f, b);
  read_rate(f, b);
  if (t.format == BenchFormat::vllm) {
    if (f.has("num_prompts"))
      b.num_prompts = {f.integer("num_prompts", 1, "an integer >= 1"), "num_prompts", f.where("num_prompts")};
    if (f.has("burstiness"))
      b.burstiness = {f.number("burstiness", 0, true, "a finite number > 0"), "burstiness", f.where("burstiness")};
    if (f.has("failed"))
      b.failed = f.integer("failed", 0, "an integer >= 0");
    if (f.has("ramp_up_strategy") && !f.at("ramp_up_strategy").is_null())
      b.notes.push_back(fmt::format("ramp_up_strategy {}: the measured run ramped its request rate up, which "
                                    "dbosim's arrivals (one rate) do not reproduce",
                                    f.at("ramp_up_strategy").dump()));
  }
  if (!b.num_prompts.value) // SGLang writes no num_prompts: the requests it sent are the completed and failed ones
    b.num_prompts = {b.completed + b.failed.value_or(0), b.failed ? "completed + failed" : "completed",
                     f.where("completed")};
}

void read_fields(const Fields& f, const FormatFields& t, BenchResult& b)
{
  b.duration_s          = f.number("duration", 0, true, "a finite number > 0 (s)");
  b.completed           = f.integer("completed", 1, "an integer >= 1 (requests that finished)");
  b.total_input_tokens  = f.integer("total_input_tokens", 0, "an integer >= 0");
  b.total_output_tokens = f.integer("total_output_tokens", 0, "an integer >= 0");
  b.request_throughput  = f.number("request_throughput", 0, false, nonnegative("req/s"));
  b.output_throughput   = f.number("output_throughput", 0, false, nonnegative("tok/s"));
  if (f.has(t.total_throughput))
    b.total_token_throughput = f.number(t.total_throughput, 0, false, nonnegative("tok/s"));
  if (t.format == BenchFormat::sglang && f.has("concurrency"))
    b.concurrency = f.number("concurrency", 0, false, nonnegative("requests"));
  read_latencies(f, t, b);
  read_settings(f, t, b);
}

} // namespace

BenchResult load_bench_result(const std::string& path, std::optional<BenchFormat> format, int line)
{
  const std::string text             = read_input_file(path, max_trace_file_bytes);
  const std::vector<JsonRecord> recs = parse_json_records(path, text, file_valid); // every one JSON, one read
  std::size_t pick                   = recs.size() - 1;
  if (line != 0) {
    const auto it = std::find_if(recs.begin(), recs.end(), [&](const JsonRecord& r) { return r.line == line; });
    if (it == recs.end()) {
      std::vector<int> starts;
      for (const JsonRecord& r : recs)
        starts.push_back(r.line);
      throw InputError(path, 0, 0, "--bench-line", fmt::format("line {} holds no result", line),
                       fmt::format("a line where a result starts: {}", fmt::join(starts, ", ")));
    }
    pick = static_cast<std::size_t>(it - recs.begin());
  }
  Fields f(path, recs[pick]);
  BenchResult b;
  b.file         = path;
  b.line         = recs[pick].line;
  b.format_given = format.has_value();
  b.format       = format ? *format : detect_format(f);
  f.set_writer(fields_of(b.format).writer);
  read_fields(f, fields_of(b.format), b);
  return b;
}

const char* bench_format_name(BenchFormat f) { return fields_of(f).name; }

BenchFormat bench_format_from_name(const std::string& name)
{
  for (const FormatFields& t : format_table)
    if (name == t.name)
      return t.format;
  throw InputError("--bench-format", 0, 0, "", fmt::format("unknown format '{}'", name), "vllm, sglang");
}

const char* latency_metric_label(LatencyMetric m)
{
  switch (m) {
  case LatencyMetric::ttft:
    return "TTFT";
  case LatencyMetric::tpot:
    return "TPOT";
  case LatencyMetric::itl:
    return "ITL";
  case LatencyMetric::e2el:
    return "E2EL";
  }
  throw InternalError("latency_metric_label: no such metric");
}

} // namespace dbosim::validate

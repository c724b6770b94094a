#include "validate/BenchResult.hpp"

#include "base/InputError.hpp"
#include "base/StrictJson.hpp"
#include "config/InputFile.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cmath>
#include <map>
#include <set>

namespace dbosim::validate {

namespace {

using json = nlohmann::json;

constexpr const char* file_valid = "the JSON of `vllm bench serve --save-result`, or the JSON lines of `python -m "
                                   "sglang.bench_serving --output-file`";

/*** The records of the file ***/

/** One JSON object of the file, as written: the whole file, or one line of a JSON-lines file. */
struct Record {
  std::string text;
  std::size_t offset = 0; ///< of `text` in the file
  int line           = 0; ///< the physical line it starts on
};

/** A record made standard JSON, and where its keys are. Python's json module writes float('nan') and float('inf') as
 *  the bare words NaN and Infinity, which are not JSON: they become the strings "NaN" and "Infinity", which the field
 *  checks then reject or read (an unbounded request rate). */
struct Scanned {
  std::string json;
  std::vector<std::size_t> quoted;           ///< offsets in `json` of each word quoted (2 bytes added each)
  std::map<std::string, std::size_t> keys;   ///< offset in the record of each top-level key, first seen
  std::map<std::string, std::size_t> repeat; ///< offset of a key's first repetition within one object
};

bool blank(const std::string& s)
{
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

Scanned scan(const std::string& t)
{
  struct Open {
    bool object = false;
    std::set<std::string> keys;
  };
  Scanned s;
  std::vector<Open> open;
  std::size_t i  = 0;
  auto bare_word = [&]() {
    for (const std::string word : {"NaN", "Infinity", "-Infinity"})
      if (t.compare(i, word.size(), word) == 0) {
        s.quoted.push_back(s.json.size());
        s.json += '"' + word + '"';
        i += word.size();
        return true;
      }
    return false;
  };
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      std::size_t j = i + 1;
      while (j < t.size() && t[j] != '"')
        j += t[j] == '\\' ? 2 : 1;
      const std::size_t end = std::min(j + 1, t.size());
      std::size_t k         = end;
      while (k < t.size() && std::isspace(static_cast<unsigned char>(t[k])) != 0)
        ++k;
      if (!open.empty() && open.back().object && k < t.size() && t[k] == ':') { // a key
        const std::string key = t.substr(i + 1, std::min(j, t.size()) - i - 1);
        if (!open.back().keys.insert(key).second)
          s.repeat.emplace(key, i);
        if (open.size() == 1)
          s.keys.emplace(key, i);
      }
      s.json.append(t, i, end - i);
      i = end;
      continue;
    }
    if (bare_word())
      continue;
    if (c == '{' || c == '[')
      open.push_back({c == '{', {}});
    else if ((c == '}' || c == ']') && !open.empty())
      open.pop_back();
    s.json += c;
    ++i;
  }
  return s;
}

/** 1-based line and column (bytes) of `offset` in `text`. */
FieldAt line_col(const std::string& text, std::size_t offset)
{
  offset                = std::min(offset, text.size());
  const auto lines      = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
  const std::size_t bol = offset == 0 ? 0 : text.rfind('\n', offset - 1);
  const std::size_t col = bol == std::string::npos ? offset + 1 : offset - bol;
  return {static_cast<int>(lines) + 1, static_cast<int>(col)};
}

/** The file split into its records: one document, or one per non-blank line when every such line (two or more) is
 *  an object of its own (vLLM's --append-result, SGLang's appended runs). */
std::vector<Record> records(const std::string& text)
{
  std::vector<Record> lines;
  std::size_t pos = 0;
  for (int line = 1; pos < text.size(); ++line) {
    std::size_t nl         = text.find('\n', pos);
    const std::size_t next = nl == std::string::npos ? text.size() : nl + 1;
    std::string one        = text.substr(pos, (nl == std::string::npos ? text.size() : nl) - pos);
    if (!blank(one))
      lines.push_back({std::move(one), pos, line});
    pos = next;
  }
  const bool json_lines = lines.size() >= 2 && std::all_of(lines.begin(), lines.end(), [](const Record& r) {
                            const std::size_t first = r.text.find_first_not_of(" \t\r");
                            return r.text[first] == '{';
                          });
  if (json_lines)
    return lines;
  return {{text, 0, lines.front().line}};
}

/*** Parsing one record ***/

struct Parsed {
  json j;
  Scanned scanned;
};

Parsed parse_record(const std::string& file, const std::string& text, const Record& r)
{
  Parsed p;
  p.scanned = scan(r.text);
  std::string duplicate;
  try {
    p.j = parse_json_unique_keys(p.scanned.json, duplicate);
  } catch (const json::parse_error& e) {
    // e.byte counts the bytes read of the quoted text: back to the file's offset
    std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    at -= 2 * static_cast<std::size_t>(std::count_if(p.scanned.quoted.begin(), p.scanned.quoted.end(),
                                                     [&](std::size_t q) { return q < at; }));
    const FieldAt where     = line_col(text, r.offset + at);
    const std::string what  = e.what();
    const std::size_t colon = what.find(": ", what.find("column"));
    throw InputError(file, where.line, where.col, "",
                     "not valid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)), file_valid);
  } catch (const json::exception& e) { // out_of_range: a number past double, such as 1e999
    throw InputError(file, r.line, 1, "", std::string("not valid JSON: ") + e.what(), file_valid);
  }
  if (!duplicate.empty()) {
    const auto it      = p.scanned.repeat.find(duplicate);
    const FieldAt here = it == p.scanned.repeat.end() ? FieldAt{r.line, 1} : line_col(text, r.offset + it->second);
    throw InputError(file, here.line, here.col, duplicate, "duplicate key (JSON keeps one value per key)",
                     "each key once per object");
  }
  if (!p.j.is_object())
    throw InputError(file, r.line, 1, "", fmt::format("expected a JSON object, got {}", p.j.type_name()), file_valid);
  return p;
}

/*** Fields ***/

class Fields {
public:
  Fields(const std::string& file, const std::string& text, const Record& r, const Parsed& p)
      : file_(file), text_(text), r_(r), p_(p)
  {
  }
  bool has(const std::string& key) const { return p_.j.contains(key); }
  const json& at(const std::string& key) const { return p_.j.at(key); }
  FieldAt where(const std::string& key) const
  {
    const auto it = p_.scanned.keys.find(key);
    return it == p_.scanned.keys.end() ? FieldAt{r_.line, 1} : line_col(text_, r_.offset + it->second);
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
      fail(key, "missing", valid);
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
      fail(key, "missing", valid);
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
  const json& object() const { return p_.j; }

private:
  const std::string& file_;
  const std::string& text_;
  const Record& r_;
  const Parsed& p_;
};

/*** Formats ***/

struct FormatFields {
  BenchFormat format;
  const char* name;
  const char* e2e;                    ///< the metric name of end-to-end latency in its keys
  const char* total_throughput;       ///< its total token throughput key
  std::array<const char*, 5> markers; ///< keys only this format writes
};

const FormatFields format_table[] = {
    {BenchFormat::vllm,
     "vllm",
     "e2el",
     "total_token_throughput",
     {"total_token_throughput", "endpoint_type", "num_prompts", "burstiness", "mean_e2el_ms"}},
    {BenchFormat::sglang,
     "sglang",
     "e2e_latency",
     "total_throughput",
     {"input_throughput", "total_throughput", "total_output_tokens_retokenized", "mean_e2e_latency_ms",
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

std::string ms_valid(const char* what) { return fmt::format("a finite number >= 0 ({})", what); }

void read_latencies(const Fields& f, const FormatFields& t, BenchResult& b)
{
  for (auto it = f.object().begin(); it != f.object().end(); ++it) {
    std::optional<LatencyStat> s = latency_key(f, t, it.key());
    if (!s)
      continue;
    s->ms = f.number(it.key(), 0, false, ms_valid("ms"));
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
  b.request_throughput  = f.number("request_throughput", 0, false, ms_valid("req/s"));
  b.output_throughput   = f.number("output_throughput", 0, false, ms_valid("tok/s"));
  if (f.has(t.total_throughput))
    b.total_token_throughput = f.number(t.total_throughput, 0, false, ms_valid("tok/s"));
  read_latencies(f, t, b);
  read_settings(f, t, b);
}

} // namespace

BenchResult load_bench_result(const std::string& path, std::optional<BenchFormat> format, int line)
{
  const std::string text = read_input_file(path, max_trace_file_bytes);
  if (blank(text))
    throw InputError(path, 0, 0, "", "empty file: no benchmark result", file_valid);
  const std::vector<Record> recs = records(text);
  std::vector<Parsed> parsed;
  for (const Record& r : recs) // every record must be JSON, though one is read
    parsed.push_back(parse_record(path, text, r));
  std::size_t pick = recs.size() - 1;
  if (line != 0) {
    const auto it = std::find_if(recs.begin(), recs.end(), [&](const Record& r) { return r.line == line; });
    if (it == recs.end()) {
      std::vector<int> starts;
      for (const Record& r : recs)
        starts.push_back(r.line);
      throw InputError(path, 0, 0, "--bench-line", fmt::format("line {} holds no result", line),
                       fmt::format("a line where a result starts: {}", fmt::join(starts, ", ")));
    }
    pick = static_cast<std::size_t>(it - recs.begin());
  }
  const Fields f(path, text, recs[pick], parsed[pick]);
  BenchResult b;
  b.file         = path;
  b.line         = recs[pick].line;
  b.format_given = format.has_value();
  b.format       = format ? *format : detect_format(f);
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

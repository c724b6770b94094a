#include "validate/TraceImport.hpp"

#include "base/InputError.hpp"
#include "config/InputFile.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

namespace dbosim::validate {

namespace {

/** RFC-4180 fields of one CSV line (quoted fields may hold commas; "" is a quote). */
std::vector<std::string> csv_fields(const std::string& line)
{
  std::vector<std::string> f(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        f.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        f.back() += c;
    } else if (c == '"')
      quoted = true;
    else if (c == ',')
      f.emplace_back();
    else if (c != '\r')
      f.back() += c;
  }
  return f;
}

double to_double(const std::string& path, int line, const std::string& key, const std::string& s)
{
  try {
    std::size_t used = 0;
    const double v   = std::stod(s, &used);
    if (used == s.size() && v >= 0 && std::isfinite(v))
      return v;
  } catch (const std::exception&) {
  }
  throw InputError(path, line, 0, key, "'" + s + "' is not a finite non-negative number");
}

std::vector<TraceKernel> read_csv(const std::string& path, std::istream& in)
{
  std::string line;
  if (!std::getline(in, line))
    throw InputError(path, 1, 0, "header", "empty file");
  const std::vector<std::string> head = csv_fields(line);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < head.size(); ++i)
    col[head[i]] = i;
  for (const char* need : {"stream", "start_us", "dur_us", "name"})
    if (!col.count(need))
      throw InputError(path, 1, 0, need, "missing column", "stream,start_us,dur_us,name[,phase,cls]");
  std::vector<TraceKernel> out;
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty())
      continue;
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() != head.size())
      throw InputError(path, n, 0, "row", fmt::format("{} fields, the header has {}", f.size(), head.size()));
    TraceKernel k;
    k.stream   = f[col["stream"]];
    k.start_us = to_double(path, n, "start_us", f[col["start_us"]]);
    k.dur_us   = to_double(path, n, "dur_us", f[col["dur_us"]]);
    k.name     = f[col["name"]];
    if (col.count("cls"))
      k.cls = f[col["cls"]];
    if (col.count("phase"))
      k.phase = f[col["phase"]];
    out.push_back(k);
  }
  return out;
}

/** e[key] as a string ("" when absent); another type is an InputError naming the key. */
std::string text_field(const std::string& path, const nlohmann::json& e, const char* key)
{
  if (!e.contains(key))
    return "";
  if (!e[key].is_string())
    throw InputError(path, 0, 0, std::string("traceEvents.") + key, "not a string: " + e.dump());
  return e[key].get<std::string>();
}

std::vector<TraceKernel> read_chrome(const std::string& path, const std::string& text)
{
  const nlohmann::json events = chrome_trace_events(path, text);
  std::vector<TraceKernel> out;
  for (const auto& e : events) {
    if (!e.is_object() || text_field(path, e, "ph") != "X")
      continue;
    if (!e.contains("ts") || !e.contains("dur") || !e["ts"].is_number() || !e["dur"].is_number())
      throw InputError(path, 0, 0, "traceEvents", "an X event without numeric ts and dur: " + e.dump());
    TraceKernel k;
    k.name     = text_field(path, e, "name");
    k.cat      = text_field(path, e, "cat");
    k.start_us = e["ts"].get<double>();
    k.dur_us   = e["dur"].get<double>();
    if (!(k.dur_us >= 0))
      throw InputError(path, 0, 0, "traceEvents.dur", "a negative duration: " + e.dump());
    k.stream = e.contains("tid") ? e["tid"].dump() : "";
    if (e.contains("args") && e["args"].is_object()) {
      const auto& a = e["args"];
      if (a.contains("stream"))
        k.stream = a["stream"].dump();
      k.cls   = text_field(path, a, "cls");
      k.phase = text_field(path, a, "phase");
    }
    out.push_back(k);
  }
  return out;
}

bool has(const std::string& field, const char* pattern)
{
  return !field.empty() && std::regex_search(field, std::regex(pattern, std::regex::icase));
}

} // namespace

nlohmann::json chrome_trace_events(const std::string& path, const std::string& text)
{
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) { // parse_error, and out_of_range for numbers such as 1E1643
    throw InputError(path, 0, 0, "json", e.what());
  }
  if (doc.is_object()) {
    if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
      throw InputError(path, 0, 0, "traceEvents", "missing or not an array");
    return std::move(doc["traceEvents"]);
  }
  if (!doc.is_array())
    throw InputError(path, 0, 0, "traceEvents", "a trace is an object with traceEvents or an array of events");
  return doc;
}

std::vector<TraceKernel> read_trace(const std::string& path)
{
  const std::string text = read_input_file(path, max_trace_file_bytes);
  if (path.size() > 4 && path.substr(path.size() - 4) == ".csv") {
    std::istringstream in(text);
    return read_csv(path, in);
  }
  return read_chrome(path, text);
}

std::string op_kind_of(const TraceKernel& k)
{
  if (has(k.cat, "^host_"))
    return "";
  static const std::regex own("^(A0|A1|D|MLP|S|C)$");
  if (std::regex_match(k.name, own))
    return k.name;
  if (has(k.cls, "ep_dispatch") || (k.cls.empty() && has(k.name, "dispatch")))
    return "D";
  if (has(k.cls, "ep_combine") || (k.cls.empty() && has(k.name, "combine")))
    return "C";
  if (has(k.cls, "wgrad_gemm"))
    return "other";
  if (has(k.cls, "^(attention_core|gate_topk)$") || (k.cls.empty() && has(k.name, "flash|mla|fmha|attn")))
    return "A1";
  if (has(k.phase, "^attn"))
    return "A0";
  if (has(k.cls, "^dense_gemm$") && has(k.phase, "^mlp"))
    return "S";
  if (has(k.phase, "^mlp") || has(k.cls, "expert_grouped_gemm|swiglu"))
    return "MLP";
  return "other";
}

std::map<std::string, OpTotals> op_totals(const std::vector<TraceKernel>& kernels)
{
  std::map<std::string, OpTotals> t;
  for (const TraceKernel& k : kernels) {
    const std::string kind = op_kind_of(k);
    if (kind.empty())
      continue;
    OpTotals& o = t[kind];
    ++o.kernels;
    o.total_us += k.dur_us;
    o.us_by_stream[k.stream] += k.dur_us;
  }
  return t;
}

std::string compare_traces(const std::string& measured_path, const std::string& dbosim_path)
{
  const auto m = op_totals(read_trace(measured_path));
  std::map<std::string, OpTotals> d;
  if (!dbosim_path.empty())
    d = op_totals(read_trace(dbosim_path));
  std::ostringstream out;
  out << fmt::format("{:<6} {:>8} {:>12} {:>7}  {:>8} {:>12} {:>7}  {:>9}  {}\n", "op", "kernels", "measured_us",
                     "share%", "ops", "dbosim_us", "share%", "dbosim/m", "measured streams (us)");
  double mt = 0, dt = 0;
  for (const auto& [k, o] : m)
    if (k != "other")
      mt += o.total_us;
  for (const auto& [k, o] : d)
    if (k != "other")
      dt += o.total_us;
  for (const char* kind : {"A0", "A1", "D", "MLP", "S", "C", "other"}) {
    const OpTotals mo = m.count(kind) ? m.at(kind) : OpTotals{};
    const OpTotals dd = d.count(kind) ? d.at(kind) : OpTotals{};
    if (mo.kernels == 0 && dd.kernels == 0)
      continue;
    std::string streams;
    for (const auto& [s, us] : mo.us_by_stream)
      streams += fmt::format("{}{}={:.0f}", streams.empty() ? "" : " ", s, us);
    const bool cmp = std::string(kind) != "other";
    out << fmt::format(
        "{:<6} {:>8} {:>12.1f} {:>7} {:>8} {:>12.1f} {:>7}  {:>9}  {}\n", kind, mo.kernels, mo.total_us,
        cmp && mt > 0 ? fmt::format("{:.1f}", 100 * mo.total_us / mt) : "-", dd.kernels, dd.total_us,
        cmp && dt > 0 ? fmt::format("{:.1f}", 100 * dd.total_us / dt) : "-",
        cmp && mo.total_us > 0 && dd.kernels > 0 ? fmt::format("{:.3f}", dd.total_us / mo.total_us) : "-", streams);
  }
  out << fmt::format("total (A0..C) measured {:.1f} us, dbosim {:.1f} us. Shares compare the mix when the setups "
                     "differ in size.\n",
                     mt, dt);
  return out.str();
}

} // namespace dbosim::validate

#include "validate/OpRecording.hpp"

#include "base/InputError.hpp"
#include "config/InputFile.hpp"
#include "validate/TraceImport.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

namespace dbosim::validate {

namespace {

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Event {
  std::string name;
  double start_us = 0;
  double end_us   = 0;
  int rep         = -1; ///< Chrome trace: args.rep when present
};

std::vector<Event> read_chrome(const std::string& path, const std::string& text)
{
  const nlohmann::json events = chrome_trace_events(path, text);
  std::vector<Event> out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[i];
    if (!e.is_object() || !e.contains("ph") || e["ph"] != "X")
      continue; // metadata, counters, instants: not kernels
    const std::string key = fmt::format("traceEvents[{}]", i);
    if (!e.contains("name") || !e["name"].is_string())
      throw InputError(path, 0, 0, key + ".name", "a complete event needs a name");
    for (const char* f : {"ts", "dur"})
      if (!e.contains(f) || !e[f].is_number() || !std::isfinite(e[f].get<double>()))
        throw InputError(path, 0, 0, key + "." + f, "missing or not a finite number (µs)");
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    if (dur < 0)
      throw InputError(path, 0, 0, key + ".dur", fmt::format("negative duration {}", dur), ">= 0");
    int rep = -1;
    if (e.contains("args") && e["args"].is_object() && e["args"].contains("rep")) {
      if (!e["args"]["rep"].is_number_integer() || e["args"]["rep"].get<long>() < 0)
        throw InputError(path, 0, 0, key + ".args.rep", "not a repeat index", "an integer >= 0");
      rep = e["args"]["rep"].get<int>();
    }
    out.push_back({e["name"].get<std::string>(), ts, ts + dur, rep});
  }
  return out;
}

double csv_number(const std::string& path, int line, const std::string& key, const std::string& s)
{
  std::size_t used = 0;
  double v         = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v))
    throw InputError(path, line, 0, key, fmt::format("'{}' is not a number (µs)", s));
  return v;
}

std::vector<Event> read_csv(const std::string& path, const std::string& text)
{
  std::istringstream in(text);
  std::string row;
  int line = 0;
  std::vector<Event> out;
  while (std::getline(in, row)) {
    ++line;
    if (!row.empty() && row.back() == '\r')
      row.pop_back();
    if (row.empty() || row[0] == '#')
      continue;
    if (out.empty() && row.rfind("op,", 0) == 0) {
      if (row != "op,start_us,end_us")
        throw InputError(path, line, 1, "header", "'" + row + "'", "op,start_us,end_us");
      continue;
    }
    std::vector<std::string> f;
    std::istringstream cells(row);
    for (std::string c; std::getline(cells, c, ',');)
      f.push_back(c);
    if (f.size() != 3)
      throw InputError(path, line, 1, "row", fmt::format("{} fields", f.size()), "op,start_us,end_us");
    Event e{f[0], csv_number(path, line, "start_us", f[1]), csv_number(path, line, "end_us", f[2]), -1};
    if (e.end_us < e.start_us)
      throw InputError(path, line, 1, "end_us", fmt::format("{} ends before it starts", e.name), ">= start_us");
    out.push_back(e);
  }
  return out;
}

} // namespace

double OpRecording::median_duration_us(const std::string& op) const
{
  std::vector<double> d;
  for (const auto& [b, e] : spans_us.at(op))
    d.push_back(e - b);
  return median(d);
}

double OpRecording::median_makespan_us() const
{
  std::vector<double> spans;
  for (int r = 0; r < reps; ++r) {
    double worst = 0;
    for (int q = 0; q < ranks; ++q) {
      const auto i = static_cast<std::size_t>(q * reps + r);
      double lo = 1e300, hi = -1e300;
      for (const auto& [op, s] : spans_us) {
        lo = std::min(lo, s[i].first);
        hi = std::max(hi, s[i].second);
      }
      worst = std::max(worst, hi - lo);
    }
    spans.push_back(worst);
  }
  return median(spans);
}

OpRecording load_op_recording(const std::string& path, const std::vector<std::string>& ops)
{
  const std::string ext  = std::filesystem::path(path).extension().string();
  const std::string text = read_input_file(path, max_trace_file_bytes);
  std::vector<Event> events;
  if (ext == ".json")
    events = read_chrome(path, text);
  else if (ext == ".csv")
    events = read_csv(path, text);
  else
    throw InputError(path, 0, 0, "recording", "unknown format '" + ext + "'", ".json (Chrome trace), .csv");
  // Repeats: by args.rep when every event carries one, else the k-th occurrence of a name in the file is repeat k
  // (repeats may restart their clock, so time order does not separate them).
  const bool by_rep = std::all_of(events.begin(), events.end(), [](const Event& e) { return e.rep >= 0; });
  if (by_rep)
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.rep < b.rep; });
  const std::set<std::string> listed(ops.begin(), ops.end());
  OpRecording r;
  for (const Event& e : events) {
    if (listed.count(e.name) == 0) {
      ++r.ignored_events;
      continue;
    }
    r.spans_us[e.name].emplace_back(e.start_us, e.end_us);
  }
  for (const std::string& op : ops) {
    const auto it = r.spans_us.find(op);
    if (it == r.spans_us.end())
      throw InputError(path, 0, 0, op, "the recording has no event of this op");
    const int n = static_cast<int>(it->second.size());
    if (r.reps == 0)
      r.reps = n;
    else if (n != r.reps)
      throw InputError(path, 0, 0, op,
                       fmt::format("recorded {} times, op '{}' {} times: every op once per repeat", n, ops[0], r.reps));
  }
  return r;
}

OpRecording load_rank_recordings(const std::string& pattern, int world_size, const std::vector<std::string>& ops)
{
  const std::string key = "{rank}";
  const std::size_t at  = pattern.find(key);
  if (at == std::string::npos) {
    if (world_size > 1)
      throw InputError(pattern, 0, 0, "recording",
                       fmt::format("one file for an op list of world_size {}: name each rank's file with {{rank}} in "
                                   "the path",
                                   world_size),
                       "a path holding {rank}");
    return load_op_recording(pattern, ops);
  }
  OpRecording all;
  for (int q = 0; q < world_size; ++q) {
    std::string path = pattern;
    path.replace(at, key.size(), std::to_string(q));
    OpRecording r = load_op_recording(path, ops);
    if (q == 0)
      all.reps = r.reps;
    else if (r.reps != all.reps)
      throw InputError(path, 0, 0, ops.front(),
                       fmt::format("rank {} recorded {} repeats, rank 0 {}: every rank the same", q, r.reps, all.reps));
    for (auto& [op, s] : r.spans_us)
      all.spans_us[op].insert(all.spans_us[op].end(), s.begin(), s.end());
    all.ignored_events += r.ignored_events;
  }
  all.ranks = world_size;
  return all;
}

} // namespace dbosim::validate

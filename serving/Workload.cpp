#include "serving/Workload.hpp"

#include "base/InputError.hpp"
#include "config/InputFile.hpp"
#include "config/ServingBounds.hpp"
#include "serving/DetRng.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

namespace dbosim::serving {

namespace {

/** vllm bench serve's random dataset: uniform integers in [floor(len (1 - r)), ceil(len (1 + r))], at least 1. */
int draw_len(DetRng& rng, int len, double ratio)
{
  const long lo = std::max(1L, static_cast<long>(std::floor(len * (1.0 - ratio))));
  const long hi = std::max(lo, static_cast<long>(std::ceil(len * (1.0 + ratio))));
  return static_cast<int>(rng.uniform_int(lo, hi));
}

} // namespace

std::vector<Request> make_requests(const RequestWorkload& w, std::uint64_t seed)
{
  std::vector<Request> out;
  if (!w.trace.empty()) {
    out = read_request_trace(w.trace);
    if (w.num_prompts > 0 && static_cast<int>(out.size()) > w.num_prompts)
      out.resize(static_cast<std::size_t>(w.num_prompts));
    return out;
  }
  // Separate streams for lengths and arrivals: changing the rate leaves the lengths as they were.
  DetRng len_rng(seed * 2 + 1);
  DetRng arrival_rng(seed * 2 + 2);
  double t = 0;
  for (int i = 0; i < w.num_prompts; ++i) {
    Request r;
    r.id = i;
    // vllm bench serve's random dataset: the shared prefix, then the random part of the drawn length.
    r.prefix_len = w.random_prefix_len;
    r.input_len  = w.random_prefix_len + draw_len(len_rng, w.random_input_len, w.random_range_ratio);
    r.output_len = draw_len(len_rng, w.random_output_len, w.random_range_ratio);
    if (w.request_rate > 0 && i > 0) // vLLM: gamma(shape = burstiness, scale = 1 / (rate * burstiness))
      t += arrival_rng.gamma(w.burstiness, 1.0 / (w.request_rate * w.burstiness));
    r.arrival_s = t;
    out.push_back(r);
  }
  return out;
}

std::vector<Request> read_request_trace(const std::string& path)
{
  std::istringstream in(read_input_file(path, max_trace_file_bytes));
  std::string line;
  if (!std::getline(in, line) || line.rfind("arrival_s,input_len,output_len", 0) != 0)
    throw InputError(path, 1, 1, "header", "the first line must be the header", "arrival_s,input_len,output_len");
  std::vector<Request> out;
  int line_no          = 1;
  double previous      = 0;
  double output_tokens = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r")
      continue;
    std::stringstream ss(line);
    std::string cell[3];
    for (auto& c : cell)
      std::getline(ss, c, ',');
    if (std::string extra; std::getline(ss, extra) && extra.find_first_not_of(" \t\r") != std::string::npos)
      throw InputError(path, line_no, static_cast<int>(cell[0].size() + cell[1].size() + cell[2].size()) + 4, "row",
                       fmt::format("more than 3 columns ('{}' after output_len)", extra),
                       "arrival_s,input_len,output_len");
    const char* names[3] = {"arrival_s", "input_len", "output_len"};
    double v[3]{};
    for (int k = 0; k < 3; ++k) {
      std::size_t used = 0;
      try {
        v[k] = std::stod(cell[k], &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || !std::isfinite(v[k]))
        throw InputError(path, line_no, 1, names[k], fmt::format("'{}' is not a number", cell[k]),
                         k == 0 ? ">= 0 s" : "integer >= 1");
    }
    if (v[0] > max_trace_arrival_s)
      throw InputError(path, line_no, 1, "arrival_s", fmt::format("{:g} s is out of range", v[0]),
                       fmt::format("0..{:g} s", max_trace_arrival_s));
    if (v[0] < previous)
      throw InputError(path, line_no, 1, "arrival_s",
                       fmt::format("{} is before the previous arrival {}", v[0], previous),
                       fmt::format(">= {}", previous));
    for (int k = 1; k < 3; ++k)
      if (v[k] < 1 || v[k] > (1 << 24) || v[k] != std::floor(v[k]))
        throw InputError(path, line_no, 1, names[k], fmt::format("{} tokens", v[k]), "integer 1..16777216");
    previous = v[0];
    output_tokens += v[2];
    if (out.size() >= static_cast<std::size_t>(max_serving_requests) || output_tokens > max_serving_output_tokens)
      throw InputError(
          path, line_no, 1, "rows",
          fmt::format("the trace passes {} requests or {:.3g} output tokens (a serving run keeps every "
                      "request and its time grows with the output tokens)",
                      max_serving_requests, max_serving_output_tokens),
          fmt::format("<= {} rows, <= {:.3g} output tokens", max_serving_requests, max_serving_output_tokens));
    out.push_back({static_cast<int>(out.size()), v[0], static_cast<int>(v[1]), static_cast<int>(v[2])});
  }
  if (out.empty())
    throw InputError(path, line_no, 1, "rows", "the trace has no requests", ">= 1 row");
  return out;
}

void check_trace_step_bound(const Scenario& s, const std::vector<Request>& requests)
{
  if (s.requests.trace.empty())
    return; // the loader checks a random workload (config/ScenarioLoader.cpp)
  double output_tokens = 0, longest = 0;
  for (const Request& r : requests) {
    output_tokens += r.output_len;
    longest = std::max(longest, double(r.output_len));
  }
  if (const auto bad = serving_steps_problem(s, double(requests.size()), output_tokens, longest))
    throw InputError(s.requests.trace, 1, 1, "rows", bad->message, bad->valid);
}

} // namespace dbosim::serving

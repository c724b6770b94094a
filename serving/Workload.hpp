/* dbosim — the requests of a serving run: random lengths and arrivals as `vllm bench serve` draws them (uniform
 * lengths in [len (1 - r), len (1 + r)], gamma inter-arrival times of shape `burstiness` at `request_rate`), or a
 * CSV trace. */
#pragma once
#include "config/Scenario.hpp"

#include <string>
#include <vector>

namespace dbosim::serving {

struct Request {
  int id           = 0;
  double arrival_s = 0; ///< when the client wants to send it (before the max_concurrency cap)
  int input_len    = 0; ///< prompt tokens (prefix_len of them the prefix every request shares)
  int output_len   = 0; ///< tokens to generate (>= 1)
  int prefix_len   = 0; ///< leading prompt tokens shared by every request (workload.random_prefix_len)
};

/** @brief The scenario's requests, in arrival order (ids 0..n-1). Deterministic in (workload, seed). */
std::vector<Request> make_requests(const RequestWorkload& w, std::uint64_t seed);

/** Latest arrival a trace may hold: a serving run's clock is a double in seconds, whose steps stay far below a
 *  microsecond up to here (1e6 s: 1.2e-10 s); 1e13 s would already shift TTFT by ~1%. */
inline constexpr double max_trace_arrival_s = 1e6;

/** @brief Reads a trace CSV: a header line `arrival_s,input_len,output_len`, then one request per line, arrivals
 *  non-decreasing, at most max_trace_arrival_s, exactly 3 columns. InputError (file, line, column name, valid range) on
 * anything else. */
std::vector<Request> read_request_trace(const std::string& path);

/** @brief InputError naming the trace when a run of its requests would pass config/ServingBounds.hpp's step bound
 *  (a random workload is checked when the scenario loads). */
void check_trace_step_bound(const Scenario& s, const std::vector<Request>& requests);

} // namespace dbosim::serving

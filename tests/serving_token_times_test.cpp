/* The ITL statistics without a list of gaps: a weighted sample's percentile is the sorted list's bit for bit (ties,
 * any order, split counts), a serving run's ITL figures are those of the list of every request's gaps (preemption,
 * disaggregated prefill, MTP, two DP ranks), and what is kept grows with steps and requests, not output tokens. */
#include "serving/ServingMetrics.hpp"
#include "serving/Workload.hpp"
#include "serving_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace dbosim;
using namespace dbosim::serving;
using dbosim::test::ClosedFormOracle;
using dbosim::test::fixed_requests;
using dbosim::test::small_params;

namespace {

ServingResult run(const ServingParams& p, std::vector<Request> reqs, int conc)
{
  ClosedFormOracle o;
  StepCache cache;
  return run_serving(p, std::move(reqs), conc, o, cache);
}

std::vector<Request> ragged_requests(int n, int output)
{
  RequestWorkload w;
  w.num_prompts        = n;
  w.random_input_len   = 300;
  w.random_output_len  = output;
  w.random_range_ratio = 0.5;
  return make_requests(w, 11);
}

/** The ITL figures as they were taken before the gaps were kept by step: over the list of every request's gaps in
 *  request order (ms; mean, std, then the percentiles of the sorted list). */
void check_against_list(const ServingResult& r)
{
  std::vector<double> ms;
  for (const LiveRequest& l : r.live)
    for (double s : itl_gaps_s(l, r.clock))
      ms.push_back(s * 1e3);
  REQUIRE(!ms.empty());
  const double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
  double var        = 0;
  for (double x : ms)
    var += (x - mean) * (x - mean);
  std::sort(ms.begin(), ms.end());
  const auto m = serving_metrics(r, 1);
  CHECK(m["mean_itl_ms"].get<double>() == mean);
  CHECK(m["std_itl_ms"].get<double>() == std::sqrt(var / double(ms.size())));
  CHECK(m["median_itl_ms"].get<double>() == percentile_of_sorted(ms, 50));
  CHECK(m["p90_itl_ms"].get<double>() == percentile_of_sorted(ms, 90));
  CHECK(m["p99_itl_ms"].get<double>() == percentile_of_sorted(ms, 99));
  const GapStats g = itl_stats(r);
  CHECK(g.ms.size() == static_cast<long>(ms.size()));
  for (long k = 0; k < g.ms.size(); k += 7)
    CHECK(g.ms.nth(k) == ms[static_cast<std::size_t>(k)]);
  // A request's gaps span its first to its last token.
  for (const LiveRequest& l : r.live) {
    CHECK(l.tokens.chunks() >= 1);
    const std::vector<double> gaps = itl_gaps_s(l, r.clock);
    CHECK(static_cast<long>(gaps.size()) == l.tokens.gaps());
    CHECK(std::accumulate(gaps.begin(), gaps.end(), 0.0) ==
          Approx(l.last_token_s - l.first_token_s).epsilon(1e-12).margin(1e-12));
  }
}

} // namespace

TEST_CASE("serving::WeightedSample: the percentile of (value, count) pairs is the sorted list's, bit for bit",
          "[quick]")
{
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int n_values = 1 + static_cast<int>(rng() % 40); // few distinct values: many ties
    std::vector<double> values;
    for (int i = 0; i < n_values; ++i)
      values.push_back(std::ldexp(double(rng() % 100000), -int(rng() % 20)) + 1e-3 * double(rng() % 7));
    std::vector<double> list;
    std::vector<std::pair<double, long>> pairs;
    const int n_pairs = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n_pairs; ++i) {
      const double v = values[rng() % values.size()]; // a value can come in several pairs
      const long c   = static_cast<long>(rng() % 5);  // and with a count of 0
      pairs.emplace_back(v, c);
      list.insert(list.end(), static_cast<std::size_t>(c), v);
    }
    const WeightedSample w(pairs);
    std::sort(list.begin(), list.end());
    REQUIRE(w.size() == static_cast<long>(list.size()));
    CHECK(w.distinct() <= values.size());
    for (double pct : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0, double(rng() % 10001) / 100.0})
      CHECK(w.percentile(pct) == percentile_of_sorted(list, pct));
    for (long k = 0; k < w.size(); ++k)
      CHECK(w.nth(k) == list[static_cast<std::size_t>(k)]);
  }
  CHECK(WeightedSample().percentile(99) == 0); // no gap: 0, as the list's
  CHECK(WeightedSample({{2.5, 3}}).percentile(10) == 2.5);
  CHECK_THROWS(WeightedSample({{2.5, 3}}).nth(3));
}

TEST_CASE("serving::ServingSim: a run's ITL figures are those of the list of every request's gaps", "[quick]")
{
  SECTION("preemption: a request's tokens pause while it recomputes")
  {
    const auto reqs  = ragged_requests(64, 200);
    const long peak  = run(small_params(), reqs, 0).peak_kv_blocks;
    const auto tight = run(small_params(1, peak * 2 / 3), reqs, 0);
    REQUIRE(tight.preemptions > 0);
    check_against_list(tight);
  }
  SECTION("disaggregated prefill: the first gap crosses from the prefill clock to the decode clock")
  {
    ServingParams p               = small_params(2);
    p.disaggregated               = true;
    p.kv_transfer_bytes_per_token = 70272;
    p.kv_transfer_bytes_per_s     = 50e9;
    p.kv_transfer_latency_s       = 3e-6;
    RequestWorkload w;
    w.num_prompts         = 100;
    w.request_rate        = 30;
    w.random_input_len    = 2000;
    w.random_output_len   = 40;
    w.random_range_ratio  = 0.3;
    const ServingResult r = run(p, make_requests(w, 4), 0);
    REQUIRE(r.clock.end_s.size() == 2);
    check_against_list(r);
  }
  SECTION("MTP: several tokens stream as one chunk, one gap per chunk")
  {
    ServingParams p       = small_params(2);
    p.speculative         = {models::SpecMethod::deepseek_mtp, 1, {0.7}};
    p.seed                = 5;
    const ServingResult r = run(p, ragged_requests(40, 120), 16);
    long tokens = 0, chunks = 0;
    for (const LiveRequest& l : r.live) {
      tokens += l.generated;
      chunks += l.tokens.chunks();
    }
    REQUIRE(chunks < tokens);
    check_against_list(r);
  }
}

TEST_CASE("serving::ServingSim: the gaps kept grow with steps and requests, not with output tokens", "[quick]")
{
  for (int output : {16, 256}) {
    const ServingResult r = run(small_params(), fixed_requests(64, 100, output), 16);
    long runs = 0, gaps = 0;
    for (const LiveRequest& l : r.live) {
      runs += static_cast<long>(l.tokens.runs().size());
      gaps += l.tokens.gaps();
      CHECK(l.tokens.runs().size() == 1); // no preemption: a token every step from the first to the last
    }
    CHECK(gaps == 64L * (output - 1));
    CHECK(runs == 64);
    const GapStats g = itl_stats(r);
    CHECK(g.ms.size() == gaps);
    // One entry per step at most (a step's gap is the same for every request that streamed in it), plus one per
    // run start after the first: far fewer than the gaps.
    CHECK(g.ms.distinct() <= r.steps.size() + static_cast<std::size_t>(runs));
    CHECK(g.ms.distinct() * 10 < static_cast<std::size_t>(gaps));
  }
  // Under preemption a request adds one run per pause, never one per token.
  const auto reqs  = ragged_requests(64, 200);
  const long peak  = run(small_params(), reqs, 0).peak_kv_blocks;
  const auto tight = run(small_params(1, peak * 2 / 3), reqs, 0);
  for (const LiveRequest& l : tight.live)
    CHECK(static_cast<int>(l.tokens.runs().size()) <= 1 + l.preemptions);
}

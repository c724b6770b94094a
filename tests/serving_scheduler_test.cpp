/* The serving loop with a closed-form oracle: ITL at concurrency 1, TTFT against input length and load, ordered
 * percentiles, preemption exactly when the KV cache overflows, Little's law, and the step-time cache. */
#include "serving/Workload.hpp"
#include "serving_test_support.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <set>

using namespace dbosim;
using namespace dbosim::serving;
using dbosim::test::ClosedFormOracle;
using dbosim::test::fixed_requests;
using dbosim::test::small_params;

namespace {

ServingResult run(const ServingParams& p, std::vector<Request> reqs, int conc, ClosedFormOracle& o)
{
  StepCache cache;
  return run_serving(p, std::move(reqs), conc, o, cache);
}

/** 64 requests of 150-450 prompt and 100-300 output tokens, sent at once. */
std::vector<Request> ragged_requests()
{
  RequestWorkload w;
  w.num_prompts        = 64;
  w.random_input_len   = 300;
  w.random_output_len  = 200;
  w.random_range_ratio = 0.5;
  return make_requests(w, 11);
}

} // namespace

TEST_CASE("serving::ServingSim: at concurrency 1 every ITL is the batch-1 decode step plus the host gap", "[quick]")
{
  ClosedFormOracle o;
  const ServingParams p   = small_params();
  const ServingResult res = run(p, fixed_requests(3, 200, 20), 1, o);
  REQUIRE(res.live.size() == 3);
  long n = 0;
  for (const LiveRequest& l : res.live) {
    const std::vector<double> itl = itl_gaps_s(l, res.clock);
    REQUIRE(itl.size() == 19);
    for (std::size_t k = 0; k < itl.size(); ++k) {
      StepKey key{{models::Phase::decode, 1, 1, 200 + static_cast<int>(k) + 1}}; // KV after the step
      const double expected_us = o.time_us(p.buckets.bucket(key)) + p.host_gap_us;
      CHECK(itl[k] * 1e6 == Approx(expected_us).epsilon(1e-9));
      ++n;
    }
  }
  CHECK(n == 57);
  // Requests never overlap at concurrency 1: the next one is sent when the previous finishes.
  CHECK(res.live[1].send_s == Approx(res.live[0].finish_s));
}

TEST_CASE("serving::ServingSim: TTFT grows with the input length", "[quick]")
{
  double previous = 0;
  for (int input : {128, 1024, 8192, 20000}) {
    ClosedFormOracle o;
    const ServingResult res = run(small_params(), fixed_requests(4, input, 4), 1, o);
    const auto m            = serving_metrics(res, 1);
    CHECK(m["mean_ttft_ms"].get<double>() > previous);
    previous = m["mean_ttft_ms"].get<double>();
  }
}

TEST_CASE("serving::ServingSim: TTFT grows with queueing at a high request rate", "[quick]")
{
  auto ttft_at = [](double rate) {
    RequestWorkload w;
    w.num_prompts            = 200;
    w.request_rate           = rate;
    w.random_input_len       = 512;
    w.random_output_len      = 64;
    ServingParams p          = small_params();
    p.scheduler.max_num_seqs = 8;
    ClosedFormOracle o;
    return serving_metrics(run(p, make_requests(w, 7), 0, o), 1)["median_ttft_ms"].get<double>();
  };
  const double low = ttft_at(1), mid = ttft_at(50), high = ttft_at(1000);
  CHECK(low < mid);
  CHECK(mid < high);
  CHECK(high > 10 * low);
}

TEST_CASE("serving::ServingMetrics: p99 >= p90 >= median for every latency", "[quick]")
{
  RequestWorkload w;
  w.num_prompts        = 300;
  w.request_rate       = 40;
  w.burstiness         = 0.5;
  w.random_input_len   = 700;
  w.random_output_len  = 90;
  w.random_range_ratio = 0.8;
  ClosedFormOracle o;
  const auto m = serving_metrics(run(small_params(2), make_requests(w, 3), 0, o), 2);
  for (const char* name : {"ttft", "tpot", "itl", "e2el"}) {
    const double med = m[fmt::format("median_{}_ms", name)], p90 = m[fmt::format("p90_{}_ms", name)],
                 p99 = m[fmt::format("p99_{}_ms", name)];
    INFO(name);
    CHECK(med > 0);
    CHECK(p90 >= med);
    CHECK(p99 >= p90);
  }
  CHECK(percentile({1, 2, 3, 4}, 90) == Approx(3.7)); // numpy.percentile([1,2,3,4], 90)
  CHECK(percentile({5}, 99) == 5);
}

TEST_CASE("serving::RankScheduler: preemption happens when and only when the KV cache overflows", "[quick]")
{
  const auto reqs = ragged_requests();
  ClosedFormOracle o;
  ServingParams roomy     = small_params(1, 1 << 20);
  const ServingResult big = run(roomy, reqs, 0, o);
  REQUIRE(big.preemptions == 0);
  const long peak = big.peak_kv_blocks; // what the run needs with no limit
  REQUIRE(peak > 100);

  ServingParams exact = small_params(1, peak);
  CHECK(run(exact, reqs, 0, o).preemptions == 0);
  ServingParams tight      = small_params(1, peak - 1);
  const ServingResult over = run(tight, reqs, 0, o);
  CHECK(over.preemptions > 0);
  CHECK(over.peak_kv_blocks <= peak - 1);
  // Every request still completes all its tokens after recompute.
  for (const LiveRequest& l : over.live)
    CHECK(l.generated == l.req->output_len);
}

TEST_CASE("serving::RankScheduler: under reserve a request starts only when its whole KV fits and is never "
          "preempted",
          "[quick]")
{
  const auto reqs = ragged_requests();
  ClosedFormOracle o;
  const long peak     = run(small_params(1, 1 << 20), reqs, 0, o).peak_kv_blocks;
  ServingParams tight = small_params(1, peak / 2); // preempt thrashes here
  REQUIRE(run(tight, reqs, 0, o).preemptions > 0);
  tight.scheduler.kv_admission = KvAdmission::reserve;
  const ServingResult res      = run(tight, reqs, 0, o);
  CHECK(res.preemptions == 0);
  CHECK(res.peak_kv_blocks <= peak / 2);
  long most_lifetime_blocks = 0;
  for (const LiveRequest& l : res.live) {
    CHECK(l.generated == l.req->output_len);
    CHECK(l.preemptions == 0);
    const long block = tight.scheduler.block_size;
    most_lifetime_blocks =
        std::max(most_lifetime_blocks, (lifetime_tokens(*l.req, tight.speculative) + block - 1) / block);
  }
  // Reserved blocks are held from admission: the cache fills to within one request's reservation.
  CHECK(res.peak_kv_blocks > peak / 2 - most_lifetime_blocks);
}

TEST_CASE("serving::ServingSim: Little's law holds on a steady Poisson run", "[quick]")
{
  RequestWorkload w;
  w.num_prompts        = 2000;
  w.request_rate       = 20;
  w.random_input_len   = 256;
  w.random_output_len  = 64;
  w.random_range_ratio = 0.5;
  ClosedFormOracle o;
  const ServingResult res = run(small_params(2), make_requests(w, 5), 0, o);
  const auto m            = serving_metrics(res, 2);
  // L from the step trace (requests on the ranks, weighted by step time), against lambda W from the requests.
  double area = 0, span = 0;
  for (const StepRecord& s : res.steps) {
    const double d = (s.step_us + s.host_gap_us) * 1e-6;
    area += (s.running + s.waiting) * d;
    span += d;
  }
  const double busy_fraction = span / m["duration"].get<double>();
  const double L_trace       = area / m["duration"].get<double>();
  const double lambda_W      = m["request_throughput"].get<double>() * m["mean_e2el_ms"].get<double>() * 1e-3;
  INFO("busy fraction " << busy_fraction);
  CHECK(L_trace == Approx(lambda_W).epsilon(0.05));
  CHECK(m["mean_requests_in_system"].get<double>() == Approx(lambda_W).epsilon(1e-9));
}

TEST_CASE("serving::StepCache: a long run simulates few distinct shapes, all of them only once", "[quick]")
{
  RequestWorkload w;
  w.num_prompts        = 500;
  w.max_concurrency    = 32;
  w.random_input_len   = 1000;
  w.random_output_len  = 200;
  w.random_range_ratio = 0.3;
  ClosedFormOracle o;
  StepCache cache;
  const ServingResult res = run_serving(small_params(4), make_requests(w, 2), 32, o, cache);
  CHECK(res.steps.size() > 2000);
  CHECK(cache.size() < res.steps.size() / 10);
  CHECK(o.calls == static_cast<long>(cache.size())); // no shape simulated twice
  for (const StepRecord& s : res.steps)              // the reported step time is the bucket's own, never a guess
    CHECK(s.step_us == o.time_us(s.bucketed));
}

TEST_CASE("serving::ServingSim: an oracle that does not batch in parallel gets one pass with the guessing passes' "
          "last result",
          "[quick]")
{
  RequestWorkload w;
  w.num_prompts        = 300;
  w.max_concurrency    = 48;
  w.random_input_len   = 600;
  w.random_output_len  = 120;
  w.random_range_ratio = 0.5;
  ClosedFormOracle batched, one_by_one;
  one_by_one.parallel = false;
  StepCache batched_cache, one_cache;
  const ServingResult a = run_serving(small_params(4), make_requests(w, 5), 48, batched, batched_cache);
  const ServingResult b = run_serving(small_params(4), make_requests(w, 5), 48, one_by_one, one_cache);
  CHECK(a.passes >= 2); // the guessing pass met shapes it had not simulated
  CHECK(b.passes == 1);
  CHECK(steps_csv(a) == steps_csv(b));
  CHECK(requests_csv(a) == requests_csv(b));
  CHECK(one_by_one.calls == static_cast<long>(one_cache.size())); // each shape once, where the run met it
  CHECK(one_cache.size() <= batched_cache.size());
  for (const auto& [key, t] : one_cache.entries())
    CHECK(batched_cache.entries().at(key).step_us == t.step_us);
}

TEST_CASE("serving::Buckets: vLLM graph sizes up to 512, geometric grids above and for context", "[quick]")
{
  Buckets b;
  CHECK(b.tokens(1) == 1);
  CHECK(b.tokens(3) == 4);
  CHECK(b.tokens(5) == 8);
  CHECK(b.tokens(250) == 256);
  CHECK(b.tokens(257) == 272);
  CHECK(b.tokens(513) == 576);   // 512 (1 + 1/8)
  CHECK(b.tokens(1100) == 1152); // 1024 (1 + 1/8)
  CHECK(b.batch(9) == 9);
  CHECK(b.context(16) == 16);
  CHECK(b.context(1100) == 1024);
  CHECK(b.context(1200) == 1280);
  for (int n = 1; n < 100000; n = n * 3 / 2 + 1) {
    CHECK(b.tokens(n) >= n);
    CHECK(std::abs(b.context(n) - n) <= n / 8 + 1);
  }
}

TEST_CASE("serving::ServingSim: DP ranks share the load round-robin or least-loaded", "[quick]")
{
  ClosedFormOracle o;
  ServingParams p = small_params(4);
  const auto res  = run(p, fixed_requests(40, 100, 10), 0, o);
  std::vector<int> per_rank(4, 0);
  for (const LiveRequest& l : res.live)
    ++per_rank[static_cast<std::size_t>(l.rank)];
  CHECK(per_rank == std::vector<int>{10, 10, 10, 10});
  p.scheduler.dp_least_loaded = true;
  const auto ll               = run(p, fixed_requests(40, 100, 10), 0, o);
  std::set<int> ranks;
  for (const LiveRequest& l : ll.live)
    ranks.insert(l.rank);
  CHECK(ranks.size() == 4);
}

TEST_CASE("serving::ServingSim: disaggregated prefill keeps prefills out of the decode steps, the KV moves first",
          "[quick]")
{
  RequestWorkload w;
  w.num_prompts                      = 200;
  w.request_rate                     = 30;
  w.random_input_len                 = 3000;
  w.random_output_len                = 50;
  w.random_range_ratio               = 0.3;
  const auto reqs                    = make_requests(w, 4);
  ServingParams colo                 = small_params(2);
  ServingParams disagg               = colo;
  disagg.disaggregated               = true;
  disagg.kv_transfer_bytes_per_token = 70272; // DeepSeek-V3's MLA latent, 61 layers
  disagg.kv_transfer_bytes_per_s     = 50e9;
  disagg.kv_transfer_latency_s       = 3e-6;
  ClosedFormOracle o;
  const ServingResult c = run(colo, reqs, 0, o);
  const ServingResult d = run(disagg, reqs, 0, o);

  double max_decode_step_us = 0;
  for (const StepRecord& s : d.steps) {
    CHECK(std::string(s.pool) != "colocated");
    if (std::string(s.pool) == "decode") {
      CHECK(s.exact.phase == models::Phase::decode); // no prefill chunk ever lands in a decode step
      max_decode_step_us = std::max(max_decode_step_us, s.step_us + s.host_gap_us);
    } else {
      CHECK(s.exact.phase == models::Phase::prefill);
    }
  }
  for (const LiveRequest& l : d.live) {
    const std::vector<double> itl = itl_gaps_s(l, d.clock);
    REQUIRE(itl.size() == static_cast<std::size_t>(l.req->output_len - 1));
    const double transfer_s = l.req->input_len * disagg.kv_transfer_bytes_per_token / disagg.kv_transfer_bytes_per_s;
    CHECK(itl[0] >= transfer_s); // the second token waits for the KV to arrive
    for (std::size_t k = 1; k < itl.size(); ++k)
      CHECK(itl[k] * 1e6 <= max_decode_step_us * (1 + 1e-12));
  }
  const auto mc = serving_metrics(c, colo.gpus), md = serving_metrics(d, 2 * disagg.gpus);
  CHECK(md["p99_itl_ms"].get<double>() < mc["p99_itl_ms"].get<double>());
  CHECK(md["completed"].get<long>() == 200);
}

TEST_CASE("serving::ServingSim: async scheduling hides the host gap behind the step, a longer gap shows", "[quick]")
{
  ClosedFormOracle o;
  ServingParams p              = small_params();
  p.scheduler.async_scheduling = true;
  const ServingResult hidden   = run(p, fixed_requests(1, 100, 5), 1, o);
  const StepKey key            = p.buckets.bucket({{models::Phase::decode, 1, 1, 101}});
  CHECK(itl_gaps_s(hidden.live[0], hidden.clock)[0] * 1e6 == Approx(o.time_us(key)).epsilon(1e-12));
  p.host_gap_us            = 5000; // a scheduler slower than the GPU step: only the excess shows
  const ServingResult slow = run(p, fixed_requests(1, 100, 5), 1, o);
  CHECK(itl_gaps_s(slow.live[0], slow.clock)[0] * 1e6 == Approx(5000).epsilon(1e-12));
  p.scheduler.async_scheduling = false;
  const ServingResult sync     = run(p, fixed_requests(1, 100, 5), 1, o);
  CHECK(itl_gaps_s(sync.live[0], sync.clock)[0] * 1e6 == Approx(o.time_us(key) + 5000).epsilon(1e-12));
}

TEST_CASE("serving::ServingSim: DBO splits a step only when every DP rank reaches its own threshold", "[quick]")
{
  ClosedFormOracle o;
  ServingParams p                       = small_params(2);
  p.overlap.enable_dbo                  = true;
  p.overlap.dbo_decode_token_threshold  = 32;
  p.overlap.dbo_prefill_token_threshold = 512;
  // One 2048-token prompt: rank 0 prefills it, rank 1 runs vLLM's 1-token dummy decode batch and vetoes the split.
  const ServingResult alone = run(p, fixed_requests(1, 2048, 2), 0, o);
  REQUIRE_FALSE(alone.steps.empty());
  CHECK(alone.steps[0].exact.phase == models::Phase::prefill);
  CHECK(alone.steps[0].exact.dp_unsplit);
  CHECK(alone.steps[0].bucketed.dp_unsplit);
  // Two, one per rank (round-robin): both reach the prefill threshold.
  const ServingResult both = run(p, fixed_requests(2, 2048, 2), 0, o);
  CHECK_FALSE(both.steps[0].exact.dp_unsplit);
  // One 300-token prompt: the step is below the threshold anyway, so the key stays the plain one.
  const ServingResult small = run(p, fixed_requests(1, 300, 2), 0, o);
  CHECK_FALSE(small.steps[0].exact.dp_unsplit);
  // Without DBO there is nothing to veto.
  p.overlap.enable_dbo      = false;
  const ServingResult nodbo = run(p, fixed_requests(1, 2048, 2), 0, o);
  CHECK_FALSE(nodbo.steps[0].exact.dp_unsplit);
}

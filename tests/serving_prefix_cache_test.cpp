/* Automatic prefix caching in the serving loop (closed-form oracle): the shared prefix's whole blocks are cached on a
 * DP rank once a request there has computed them, later requests start past them (short of their last prompt
 * token), attend over them, share their KV blocks, and the hit rate counts exactly those tokens. */
#include "serving/Workload.hpp"
#include "serving_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dbosim;
using namespace dbosim::serving;
using dbosim::test::ClosedFormOracle;
using dbosim::test::fixed_requests;
using dbosim::test::small_params;

namespace {

ServingResult run(const ServingParams& p, std::vector<Request> reqs, ClosedFormOracle& o)
{
  StepCache cache;
  return run_serving(p, std::move(reqs), 0, o, cache);
}

/** n requests 1 s apart (each runs alone), every prompt starting with the same prefix_len tokens. */
std::vector<Request> with_prefix(int n, int input, int output, int prefix_len)
{
  std::vector<Request> reqs = fixed_requests(n, input, output, 1.0);
  for (Request& r : reqs)
    r.prefix_len = prefix_len;
  return reqs;
}

/** The first request alone at t = 0 (it caches the prefix), the other n - 1 together at 1 s. */
std::vector<Request> first_then_burst(int n, int input, int output, int prefix_len)
{
  std::vector<Request> reqs = with_prefix(n, input, output, prefix_len);
  for (std::size_t i = 1; i < reqs.size(); ++i)
    reqs[i].arrival_s = 1.0;
  return reqs;
}

double ttft_s(const LiveRequest& l) { return l.first_token_s - l.send_s; }

} // namespace

TEST_CASE("serving::RankScheduler: prefix caching skips the cached prefix's whole blocks after the first request",
          "[quick]")
{
  ClosedFormOracle o;
  ServingParams p = small_params(1);
  // A 1000-token prefix in 16-token blocks: 62 whole blocks (992 tokens) can be cached; the 1024-token prompts then
  // compute their last 32 tokens.
  const ServingResult on            = run(p, with_prefix(10, 1024, 4, 1000), o);
  p.scheduler.enable_prefix_caching = false;
  const ServingResult off           = run(p, with_prefix(10, 1024, 4, 1000), o);

  CHECK(on.prefix_queried_tokens == 10 * 1024);
  CHECK(on.prefix_hit_tokens == 9 * 992);
  CHECK(off.prefix_queried_tokens == 0);
  CHECK(off.prefix_hit_tokens == 0);
  // The first request computes its whole prompt in both runs; the others compute 32 tokens over 1024 keys.
  CHECK(ttft_s(on.live[0]) == Approx(ttft_s(off.live[0])));
  bool saw_hit_step = false;
  for (const StepRecord& s : on.steps)
    if (s.exact.phase == models::Phase::prefill && s.exact.tokens == 32) {
      CHECK(s.exact.context_len == 1024);
      saw_hit_step = true;
    }
  CHECK(saw_hit_step);
  for (std::size_t i = 1; i < on.live.size(); ++i) {
    CHECK(ttft_s(on.live[i]) < 0.5 * ttft_s(off.live[i]));
    CHECK(on.live[i].generated == 4);
  }
  // Every token still generated; the served prompts are the same length either way.
  for (const LiveRequest& l : on.live)
    CHECK(l.generated == l.req->output_len);
}

TEST_CASE("serving::RankScheduler: a prompt that is all prefix still computes its last token", "[quick]")
{
  ClosedFormOracle o;
  // 1024 = 64 whole blocks, all of them the prefix: the hit stops at 63 blocks, so 16 tokens are computed.
  const ServingResult r = run(small_params(1), with_prefix(3, 1024, 2, 1024), o);
  CHECK(r.prefix_hit_tokens == 2 * 1008);
  for (const LiveRequest& l : r.live)
    CHECK(l.generated == 2);
}

TEST_CASE("serving::RankScheduler: cached prefix blocks are held once per rank, not once per request", "[quick]")
{
  ClosedFormOracle o;
  // Twelve requests that all run at once (no arrival gap) after the first has cached the prefix: each holds its own
  // blocks past the 62 shared ones.
  const std::vector<Request> reqs   = first_then_burst(13, 1024, 64, 1000);
  ServingParams p                   = small_params(1);
  const ServingResult on            = run(p, reqs, o);
  p.scheduler.enable_prefix_caching = false;
  const ServingResult off           = run(p, reqs, o);
  // Without caching: 12 requests x ceil((1024 + 64) / 16) = 68 blocks at the end. With it: 62 shared + 12 x 6 own.
  CHECK(off.peak_kv_blocks == 12 * 68);
  CHECK(on.peak_kv_blocks == 62 + 12 * 6);
}

TEST_CASE("serving::RankScheduler: a preempted request finds the prefix again and still completes", "[quick]")
{
  ClosedFormOracle o;
  const std::vector<Request> reqs = first_then_burst(24, 600, 300, 512);
  ServingParams roomy             = small_params(1);
  const ServingResult big         = run(roomy, reqs, o);
  REQUIRE(big.preemptions == 0);
  ServingParams tight         = small_params(1, big.peak_kv_blocks / 2);
  const ServingResult preempt = run(tight, reqs, o);
  CHECK(preempt.preemptions > 0);
  CHECK(preempt.peak_kv_blocks <= big.peak_kv_blocks / 2);
  // Each admission after the first request's queries the cache again: more queried tokens, hits on each.
  CHECK(preempt.prefix_queried_tokens > big.prefix_queried_tokens);
  CHECK(preempt.prefix_hit_tokens > big.prefix_hit_tokens);
  for (const LiveRequest& l : preempt.live)
    CHECK(l.generated == l.req->output_len);
}

TEST_CASE("serving::make_requests: random_prefix_len comes before each prompt's random part", "[quick]")
{
  RequestWorkload w;
  w.num_prompts                    = 50;
  w.random_input_len               = 200;
  w.random_range_ratio             = 0.5;
  const std::vector<Request> plain = make_requests(w, 5);
  w.random_prefix_len              = 1000;
  const std::vector<Request> pre   = make_requests(w, 5);
  REQUIRE(pre.size() == plain.size());
  for (std::size_t i = 0; i < pre.size(); ++i) {
    CHECK(pre[i].prefix_len == 1000);
    CHECK(pre[i].input_len == plain[i].input_len + 1000); // the same random draws, the prefix in front
    CHECK(pre[i].output_len == plain[i].output_len);
  }
}

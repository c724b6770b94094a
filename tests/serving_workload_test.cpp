/* Workloads: deterministic draws, the rate and burstiness of the arrivals, length ranges, and the CSV trace. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ServingBounds.hpp"
#include "serving/DetRng.hpp"
#include "serving/Workload.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dbosim;
using namespace dbosim::serving;

TEST_CASE("serving::Workload: same seed, same requests, the draws are our own transform of mt19937_64", "[quick]")
{
  RequestWorkload w;
  w.num_prompts        = 100;
  w.request_rate       = 5;
  w.random_range_ratio = 0.5;
  const auto a = make_requests(w, 42), b = make_requests(w, 42), c = make_requests(w, 43);
  REQUIRE(a.size() == 100);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].arrival_s == b[i].arrival_s);
    CHECK(a[i].input_len == b[i].input_len);
    differs = differs || a[i].input_len != c[i].input_len;
    CHECK(a[i].input_len >= 512);
    CHECK(a[i].input_len <= 1536);
    CHECK(a[i].output_len >= 64);
    CHECK(a[i].output_len <= 192);
  }
  CHECK(differs);
  DetRng rng(1);
  CHECK(rng.uniform01() == DetRng(1).uniform01());
}

TEST_CASE("serving::Workload: Poisson and gamma arrivals have the rate's mean and the burstiness' spread", "[quick]")
{
  for (double burst : {1.0, 0.25, 4.0}) {
    RequestWorkload w;
    w.num_prompts  = 40000;
    w.request_rate = 10;
    w.burstiness   = burst;
    const auto r   = make_requests(w, 9);
    double sum = 0, sq = 0;
    for (std::size_t i = 1; i < r.size(); ++i) {
      const double gap = r[i].arrival_s - r[i - 1].arrival_s;
      CHECK(gap >= 0);
      sum += gap;
      sq += gap * gap;
    }
    const double n = double(r.size() - 1), mean = sum / n, var = sq / n - mean * mean;
    INFO("burstiness " << burst);
    CHECK(mean == Approx(0.1).epsilon(0.03));
    CHECK(var / (mean * mean) == Approx(1.0 / burst).epsilon(0.08)); // gamma: CV^2 = 1 / shape
  }
  RequestWorkload all_at_once;
  all_at_once.num_prompts = 10;
  for (const Request& r : make_requests(all_at_once, 1))
    CHECK(r.arrival_s == 0);
}

TEST_CASE("serving::Workload: a CSV trace is read as is, and a bad row names its line and column", "[quick]")
{
  test::TempDir dir;
  const auto good = dir.write("t.csv", "arrival_s,input_len,output_len\n0,100,10\n0.5,2000,1\n1.25,7,300\n");
  RequestWorkload w;
  w.trace      = good;
  const auto r = make_requests(w, 0);
  REQUIRE(r.size() == 3);
  CHECK(r[1].arrival_s == 0.5);
  CHECK(r[1].input_len == 2000);
  CHECK(r[2].output_len == 300);

  const auto bad = dir.write("b.csv", "arrival_s,input_len,output_len\n0,100,10\n1,abc,3\n");
  CHECK_THROWS_WITH(read_request_trace(bad), Catch::Contains("b.csv:3:1: input_len"));
  const auto back = dir.write("c.csv", "arrival_s,input_len,output_len\n2,100,10\n1,100,3\n");
  CHECK_THROWS_WITH(read_request_trace(back), Catch::Contains("arrival_s"));
  const auto zero = dir.write("z.csv", "arrival_s,input_len,output_len\n0,0,10\n");
  CHECK_THROWS_AS(read_request_trace(zero), InputError);
  CHECK_THROWS_AS(read_request_trace(dir.path() + "/missing.csv"), InputError);
}

TEST_CASE("serving step bound: the fewest steps a run can take, and the runs refused above the bound", "[quick]")
{
  Scenario s;
  s.parallel.dp              = 8;
  s.scheduler.max_num_seqs   = 256;
  s.requests.max_concurrency = 0;
  // 10^6 requests of 128 tokens: at most 8 x 256 run at once
  CHECK(serving_running_cap(s, 1e6) == 2048);
  CHECK(min_serving_steps(s, 1e6, 1.28e8, 128) == 62500);
  CHECK_FALSE(serving_steps_problem(s, 1e6, 1.28e8, 128));
  // one request in flight at a time: every token a step
  s.requests.max_concurrency = 1;
  CHECK(min_serving_steps(s, 1e6, 1.28e8, 128) == 1.28e8);
  const auto bad = serving_steps_problem(s, 1e6, 1.28e8, 128);
  REQUIRE(bad);
  CHECK(bad->message.find("at least 128000000 steps") != std::string::npos);
  CHECK(bad->valid.find("at most 1048576 output tokens") != std::string::npos);
  // the longest request alone: exactly the bound runs, one more token does not
  s.requests.max_concurrency = 0;
  CHECK_FALSE(serving_steps_problem(s, 1, max_serving_steps, max_serving_steps));
  CHECK(serving_steps_problem(s, 1, max_serving_steps + 1, max_serving_steps + 1));
  // speculative decoding: 1 + k tokens a step
  s.speculative.method                 = models::SpecMethod::deepseek_mtp;
  s.speculative.num_speculative_tokens = 3;
  CHECK(min_serving_steps(s, 1, 4 * max_serving_steps, 4 * max_serving_steps) == max_serving_steps);
  // a trace is checked once read, named at its rows
  s.requests.trace = "t.csv";
  std::vector<Request> requests(2);
  requests[0].output_len = 1 << 24;
  requests[1].output_len = 1;
  CHECK_THROWS_WITH(check_trace_step_bound(s, requests), Catch::Contains("t.csv:1:1: rows"));
  requests[0].output_len = 1 << 20;
  CHECK_NOTHROW(check_trace_step_bound(s, requests));
}

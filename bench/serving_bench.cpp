/* Google Benchmark of a serving run: 1,000 requests at concurrency 64, DeepSeek-V3 EP8 (scenarios/
 * dsv3_serving_ep8_c64.yaml). Cold: a fresh step-time cache, every distinct shape simulated in forked engine children
 * (the acceptance figure: <= 5 s). Warm: the scheduler loop alone over a filled cache. The parent never starts
 * SimGrid, so iterations can repeat in one process. */
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"
#include "serving/ServingSim.hpp"
#include "serving/Workload.hpp"

#include <benchmark/benchmark.h>

using namespace dbosim;
using namespace dbosim::serving;

namespace {

const Scenario& scenario()
{
  static const Scenario s = load_scenario(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_serving_ep8_c64.yaml");
  return s;
}

void BM_ServingColdCache(benchmark::State& state)
{
  const Scenario& s     = scenario();
  const ServingParams p = serving_params(s, kv_capacity(s));
  long shapes = 0, steps = 0;
  for (auto _ : state) {
    EngineOracle oracle(s);
    StepCache cache;
    const ServingResult r =
        run_serving(p, make_requests(s.requests, s.seed), s.requests.max_concurrency, oracle, cache);
    benchmark::DoNotOptimize(r.steps.data());
    shapes = static_cast<long>(cache.size());
    steps  = static_cast<long>(r.steps.size());
  }
  state.counters["distinct_shapes"] = static_cast<double>(shapes);
  state.counters["steps"]           = static_cast<double>(steps);
}
BENCHMARK(BM_ServingColdCache)->Unit(benchmark::kSecond)->Iterations(3)->UseRealTime();

void BM_ServingWarmCache(benchmark::State& state)
{
  const Scenario& s     = scenario();
  const ServingParams p = serving_params(s, kv_capacity(s));
  EngineOracle oracle(s);
  StepCache cache;
  run_serving(p, make_requests(s.requests, s.seed), s.requests.max_concurrency, oracle, cache);
  for (auto _ : state) {
    const ServingResult r =
        run_serving(p, make_requests(s.requests, s.seed), s.requests.max_concurrency, oracle, cache);
    benchmark::DoNotOptimize(r.steps.data());
  }
}
BENCHMARK(BM_ServingWarmCache)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();

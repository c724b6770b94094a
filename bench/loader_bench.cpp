/* dbosim — the cost of reading input files again: a sweep or a plan loads the same hardware profile, model and
 * network facts once per point, and FileMemo re-reads each file's bytes on every call (a hit needs the same bytes).
 *   build/bench/loader_bench [--benchmark_filter=NAME]
 * BM_ProfileMemoHit: load_hw_profile(h200.yaml) when the memo holds it (the file read and compared, not parsed, and
 * the profile copied out); BM_FileMemoHit: the read and compare alone. */
#include "config/FileMemo.hpp"
#include "config/HwProfileLoader.hpp"

#include <benchmark/benchmark.h>

#include <string>

static const std::string profile = std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/h200.yaml";

static void BM_ProfileMemoHit(benchmark::State& state)
{
  dbosim::load_hw_profile(profile); // fills the memo
  for (auto _ : state)
    benchmark::DoNotOptimize(dbosim::load_hw_profile(profile));
}
BENCHMARK(BM_ProfileMemoHit);

static void BM_FileMemoHit(benchmark::State& state)
{
  dbosim::FileMemo<int> memo;
  for (auto _ : state)
    benchmark::DoNotOptimize(memo.get(profile, profile, [] { return 1; }));
}
BENCHMARK(BM_FileMemoHit);

BENCHMARK_MAIN();

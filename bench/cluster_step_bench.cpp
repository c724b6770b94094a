/* dbosim — a cluster step end to end, as `dbosim run` does it: plan (routing, per-rank costs), the exact max-plus
 * replay of every rank, metrics, the representative rank's summary, and trace.json streamed to a temporary file. The
 * default scenario is the largest shipped step: DeepSeek-V3 DBO decode on 1,024 GB200s, Zipf routing with EPLB, every
 * rank drawn (scenarios/dsv3_decode_ep1024_gb200_zipf_eplb.yaml; DBOSIM_BENCH_SCENARIO=path for another).
 *
 *   build/bench/cluster_step_bench                                      # the default trace (--trace auto)
 *   build/bench/cluster_step_bench --benchmark_filter=BM_cluster_step_trace_all
 *
 * No SimGrid (the replay is exact for this step), so every benchmark may run in one process. Counters: the trace's
 * bytes, the ranks simulated and drawn, the simulated step, and the process's peak RSS so far. */
#include "base/AtomicFile.hpp"
#include "config/ScenarioLoader.hpp"
#include "sim/engine/ClusterRun.hpp"
#include "sim/output/OutputGuards.hpp"
#include "sim/output/Summary.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

const Scenario& bench_scenario()
{
  static const Scenario sc =
      load_scenario(std::getenv("DBOSIM_BENCH_SCENARIO")
                        ? std::string(std::getenv("DBOSIM_BENCH_SCENARIO"))
                        : std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_decode_ep1024_gb200_zipf_eplb.yaml");
  return sc;
}

double max_rss_mb()
{
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0; // Linux: KiB
}

void cluster_step(benchmark::State& state, TraceMode mode)
{
  const Scenario& sc = bench_scenario();
  TraceSelection sel;
  sel.mode                = mode;
  const std::string trace = (std::filesystem::temp_directory_path() /
                             ("dbosim-cluster-step-bench-" + std::to_string(::getpid()) + "-trace.json"))
                                .string();
  double bytes = 0, step_us = 0, classes = 0, drawn = 0;
  for (auto _ : state) {
    const ClusterRun run        = run_cluster(sc);
    const RankStep rep          = representative_step(run);
    auto summary                = summary_json(*rep.plan, rep.metrics);
    summary["cluster"]          = cluster_summary_json(run.plan, run.metrics);
    const TracedRanks sel_ranks = pick_trace_ranks(sel, run.plan, run.metrics);
    write_file_atomic(
        trace, [&](std::ostream& out) { write_cluster_trace(out, run.sched, run.plan, run.timeline, sel_ranks); });
    benchmark::DoNotOptimize(summary);
    bytes   = static_cast<double>(std::filesystem::file_size(trace));
    step_us = run.metrics.step_time_us;
    classes = run.metrics.classes;
    drawn   = static_cast<double>(sel_ranks.ranks.size());
  }
  std::filesystem::remove(trace);
  state.counters["trace_mb"]        = bytes / 1e6;
  state.counters["ranks_simulated"] = classes;
  state.counters["ranks_drawn"]     = drawn;
  state.counters["step_us"]         = step_us;
  state.counters["max_rss_mb"]      = max_rss_mb();
}

void BM_cluster_step_default_trace(benchmark::State& state) { cluster_step(state, TraceMode::automatic); }
void BM_cluster_step_trace_all(benchmark::State& state) { cluster_step(state, TraceMode::all); }

} // namespace

BENCHMARK(BM_cluster_step_default_trace)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_cluster_step_trace_all)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_MAIN();

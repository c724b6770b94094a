/* The serving keys in a scenario: defaults keep the single-step run, vLLM's names are read, bad values and bad
 * sweep sections are InputErrors naming file, line and key. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/ScenarioParams.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace dbosim;

namespace {
const std::string base = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
overlap: {all2all_backend: deepep_low_latency}
)";
}

TEST_CASE("serving::params: defaults keep the single-step run, vLLM's names are read", "[quick]")
{
  test::TempDir dir;
  const Scenario plain = load_scenario(dir.write("a.yaml", base + "workload: {tokens_per_rank: 8}\n"));
  CHECK(plain.requests.num_prompts == 0);
  CHECK(plain.scheduler.max_num_seqs == 256);
  CHECK(plain.sweep_axes == 0);
  std::ofstream(dir.path() + "/t.csv") << "arrival_s,input_len,output_len\n0,1,1\n";
  const Scenario s = load_scenario(dir.write(
      "b.yaml", base + "workload: {tokens_per_rank: 1, num_prompts: 10, max_concurrency: 4, request_rate: 2.5, "
                       "burstiness: 0.5, random_input_len: 100, random_output_len: 7, random_range_ratio: 0.25, "
                       "trace: t.csv}\n"
                       "scheduler: {max_num_seqs: 3, max_num_batched_tokens: 512, enable_chunked_prefill: false, "
                       "async_scheduling: true, dp_least_loaded: true, num_gpu_blocks_override: 99}\n"
                       "serving: {context_buckets_per_octave: 2, exact_samples: 0, step_trace: false}\n"
                       "sweep: {\"parallel.ep,parallel.dp\": [[8, 8]], workload.max_concurrency: [1, 2]}\n"));
  CHECK(s.requests.max_concurrency == 4);
  CHECK(s.requests.request_rate == 2.5);
  CHECK(s.requests.random_range_ratio == 0.25);
  CHECK(s.requests.trace == dir.path() + "/t.csv"); // relative to the scenario's folder
  CHECK(s.scheduler.max_num_batched_tokens == 512);
  CHECK_FALSE(s.scheduler.enable_chunked_prefill);
  CHECK(s.scheduler.async_scheduling);
  CHECK(s.scheduler.num_gpu_blocks_override == 99);
  CHECK(s.serving.context_buckets_per_octave == 2);
  CHECK(s.sweep_axes == 2);
  CHECK(format_param_table().find("scheduler.max_num_batched_tokens") != std::string::npos);
}

TEST_CASE("serving::params: bad serving values and sweep sections name the file, line and key", "[quick]")
{
  test::TempDir dir;
  auto error_of = [&](const std::string& tail) {
    try {
      load_scenario(dir.write("x.yaml", base + "workload: {tokens_per_rank: 1}\n" + tail));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("scheduler: {max_num_seqs: 0}\n"),
             Catch::Contains("x.yaml:7:") && Catch::Contains("max_num_seqs") && Catch::Contains("1..1048576"));
  CHECK_THAT(error_of("scheduler: {gpu_memory_utilization: 1.5}\n"), Catch::Contains("gpu_memory_utilization"));
  CHECK_THAT(error_of("scheduler: {max_num_seq: 3}\n"), Catch::Contains("max_num_seq: unknown key"));
  CHECK_THAT(error_of("sweep: [1, 2]\n"), Catch::Contains("sweep") && Catch::Contains("mapping"));
  CHECK_THAT(error_of("sweep: {parallel.ep: []}\n"), Catch::Contains("parallel.ep") && Catch::Contains("non-empty"));
  CHECK_THAT(error_of("sweep: {parallel.ep: [[8, 8]]}\n"), Catch::Contains("scalar"));
  CHECK_THAT(error_of("sweep: {\"parallel.ep,parallel.dp\": [8, 16]}\n"), Catch::Contains("list of 2 scalars"));
}

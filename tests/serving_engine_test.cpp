/* The serving layer on the real engine (each step shape simulated in a forked child), and the CLI: byte-identical
 * serving runs and sweeps whatever -j. */
#include "TempDir.hpp"
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"
#include "serving/ServingMetrics.hpp"
#include "serving/ServingSim.hpp"
#include "serving/Workload.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace dbosim;
using namespace dbosim::serving;

namespace {

const std::string serving_yaml = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 2, max_concurrency: 1, random_input_len: 300, random_output_len: 6}
overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}
seed: 3
)";

std::string slurp(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int sh(const std::string& cmd) { return std::system((cmd + " > /dev/null 2>&1").c_str()); }

} // namespace

TEST_CASE("serving::EngineOracle: at concurrency 1 the ITL is the engine's batch-1 decode step plus the host gap",
          "[quick]")
{
  test::TempDir dir;
  const Scenario s      = load_scenario(dir.write("s.yaml", serving_yaml));
  const KvCapacity kv   = kv_capacity(s);
  const ServingParams p = serving_params(s, kv);
  EngineOracle oracle(s, 2);
  StepCache cache;
  const ServingResult res = run_serving(p, make_requests(s.requests, s.seed), 1, oracle, cache);
  const StepKey key       = p.buckets.bucket({{models::Phase::decode, 1, 1, 301}});
  const StepTime t        = oracle.simulate({key}).at(0);
  CHECK(t.ubatches == 1); // one token is below DBO's decode threshold
  CHECK(t.cuda_graph);
  CHECK(p.host_gap_us == s.hw.stream_sync_us);
  const std::vector<double> itl = itl_gaps_s(res.live.at(0), res.clock);
  REQUIRE(itl.size() == 5);
  CHECK(itl[0] * 1e6 == Approx(t.step_us + p.host_gap_us).epsilon(1e-12));
  CHECK(t.step_us > 1000); // a 61-layer step is milliseconds, not a placeholder
}

TEST_CASE("serving::EngineOracle: a step whose DP ranks do not all reach the DBO threshold runs unsplit", "[quick]")
{
  test::TempDir dir;
  const Scenario s = load_scenario(dir.write("s.yaml", serving_yaml));
  EngineOracle oracle(s, 2);
  StepKey key{{models::Phase::decode, 64, 64, 512}};
  const StepTime split = oracle.simulate({key}).at(0);
  key.dp_unsplit       = true;
  const StepTime whole = oracle.simulate({key}).at(0);
  CHECK(split.ubatches == 2); // 64 tokens reach the decode threshold (32)
  CHECK(whole.ubatches == 1); // another rank below it: vLLM micro-batches no rank
  CHECK(whole.step_us != split.step_us);
  CHECK(oracle.rank_work(key).attention_us !=
        oracle.rank_work(StepKey{{models::Phase::decode, 64, 64, 512}}).attention_us);
}

TEST_CASE("serving::KvCapacity: MLA stores one latent per token and layer, weights and activations come off HBM",
          "[quick]")
{
  test::TempDir dir;
  const Scenario s = load_scenario(dir.write("s.yaml", serving_yaml));
  // DeepSeek-V3: (512 + 64) BF16 per layer, 61 layers.
  CHECK(kv_bytes_per_token(s.model, 1) == Approx((512.0 + 64) * 2 * 61));
  const KvCapacity kv = kv_capacity(s);
  // DP8/EP8: each GPU holds its eighth of the experts (FP8) and a whole copy of the ~17 B non-expert parameters
  // (attention, dense FFN, shared experts, embeddings). Bounds: at least an eighth of the 671 B-parameter FP8
  // checkpoint; at most that plus the replicated non-expert part in BF16 (2 B each).
  CHECK(kv.weight_bytes > 671e9 / 8);
  CHECK(kv.weight_bytes < 671e9 / 8 + 17e9 * 2);
  CHECK(kv.num_blocks * kv.block_size * kv.kv_bytes_per_token <=
        kv.budget_bytes - kv.weight_bytes - kv.activation_bytes);
  CHECK(kv.num_blocks > 1000);
}

TEST_CASE("serving::cli: a serving run and a sweep are byte-identical across runs and -j", "[slow]")
{
  test::TempDir dir;
  const std::string exe = DBOSIM_BINARY;
  const std::string s   = dir.write("s.yaml", serving_yaml + "sweep:\n  workload.max_concurrency: [1, 2]\n"
                                                               "  overlap.enable_dbo: [false, true]\n");
  REQUIRE(sh(exe + " run " + s + " --out " + dir.path() + "/a") == 0);
  REQUIRE(sh(exe + " run " + s + " --out " + dir.path() + "/b") == 0);
  for (const char* f : {"summary.json", "requests.csv", "steps.csv"})
    CHECK(slurp(dir.path() + "/a/" + f) == slurp(dir.path() + "/b/" + f));
  CHECK(slurp(dir.path() + "/a/summary.json").find("\"mean_itl_ms\"") != std::string::npos);
  REQUIRE(sh(exe + " sweep " + s + " -j 1 --out " + dir.path() + "/j1") == 0);
  REQUIRE(sh(exe + " sweep " + s + " -j 2 --out " + dir.path() + "/j2") == 0);
  const std::string csv = slurp(dir.path() + "/j1/sweep.csv");
  CHECK(csv == slurp(dir.path() + "/j2/sweep.csv"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
  CHECK(csv.find("failed") == std::string::npos);
}

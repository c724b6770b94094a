/* Chunked prefill on the real engine: each chunk of a prompt is a step keyed at its own offset (context = tokens
 * already prefilled + this chunk), so a chunked prompt's TTFT carries its later chunks' longer attention; and long
 * prompts (32k) run to completion under the default 8192-token budget. */
#include "RunShell.hpp"
#include "TempDir.hpp"
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"
#include "serving/ServingSim.hpp"
#include "serving/Workload.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace dbosim;
using namespace dbosim::serving;

namespace {
// One 8192-token prompt, 2048-token budget: four chunks. No DBO, so a step is its ops in series.
const std::string chunked_yaml = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 1, max_concurrency: 1, random_input_len: 8192, random_output_len: 2}
overlap: {enable_dbo: false, all2all_backend: deepep_high_throughput}
scheduler: {max_num_batched_tokens: 2048, enable_chunked_prefill: true}
execution: {cuda_graph: none}
seed: 3
)";

double attention_us(const StepTime& t)
{
  return t.per_op_us[static_cast<std::size_t>(models::OpKind::A0)] +
         t.per_op_us[static_cast<std::size_t>(models::OpKind::A1)];
}
} // namespace

TEST_CASE("serving::ServingSim: each prefill chunk is costed at its own offset, TTFT carries the later chunks' "
          "attention",
          "[quick]")
{
  test::TempDir dir;
  const Scenario s      = load_scenario(dir.write("s.yaml", chunked_yaml));
  const ServingParams p = serving_params(s, kv_capacity(s));
  EngineOracle oracle(s, 2);
  StepCache cache;
  const ServingResult res = run_serving(p, make_requests(s.requests, s.seed), 1, oracle, cache);
  REQUIRE(res.live.size() == 1);
  REQUIRE(res.live[0].req->input_len == 8192);
  REQUIRE(res.steps.size() >= 4);
  // The chunks: 2048 new tokens each, over 2048, 4096, 6144 and 8192 keys (all of them context grid points).
  std::vector<StepTime> chunk;
  for (int k = 0; k < 4; ++k) {
    const StepKey want{{models::Phase::prefill, 2048, 1, 2048 * (k + 1)}};
    CHECK(res.steps[static_cast<std::size_t>(k)].exact == want);
    CHECK(res.steps[static_cast<std::size_t>(k)].bucketed == want);
    chunk.push_back(oracle.simulate({want}).at(0));
  }
  // TTFT = the four chunk steps and their host gaps.
  const double ttft_us = (res.live[0].first_token_s - res.live[0].send_s) * 1e6;
  double sum_us        = 0;
  for (const StepTime& t : chunk)
    sum_us += t.step_us + p.host_gap_us;
  CHECK(ttft_us == Approx(sum_us).epsilon(1e-9));
  // Costed like the first chunk four times (the model before context), TTFT would be 4 x (first + gap); it exceeds
  // that by the later chunks' longer attention (A0's kv_b up-projection of the context and A1's core), the rest of
  // each step being the same 2048-token work.
  const double first_us = chunk[0].step_us + p.host_gap_us;
  double later_attn_us  = 0;
  for (int k = 1; k < 4; ++k) {
    CHECK(attention_us(chunk[static_cast<std::size_t>(k)]) > attention_us(chunk[static_cast<std::size_t>(k - 1)]));
    later_attn_us += attention_us(chunk[static_cast<std::size_t>(k)]) - attention_us(chunk[0]);
  }
  CHECK(ttft_us > 4 * first_us);
  CHECK(ttft_us - 4 * first_us == Approx(later_attn_us).epsilon(0.02));
}

TEST_CASE("cli: 32k prompts under chunked prefill (default 8192 budget) and a 4096-token prefill at 32k context run",
          "[quick]")
{
  test::TempDir dir;
  int rc                    = 0;
  const std::string serving = dir.write("long.yaml", R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 2, max_concurrency: 2, random_input_len: 32768, random_output_len: 4}
overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}
scheduler: {enable_chunked_prefill: true}
seed: 1
)");
  const std::string out =
      test::run_shell(std::string(DBOSIM_BINARY) + " run " + serving + " --out " + dir.path() + "/serving 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(out.find("violates a physical bound") == std::string::npos);
  std::ifstream steps(dir.path() + "/serving/steps.csv");
  std::stringstream ss;
  ss << steps.rdbuf();
  // The last chunk of a 32768-token prompt: 8192 new tokens over all 32768 keys.
  CHECK(ss.str().find(",prefill,8192,1,32768,") != std::string::npos);

  const std::string step = dir.write("step.yaml", R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: prefill, tokens_per_rank: 4096, context_len: 32768}
overlap: {enable_dbo: false, all2all_backend: deepep_high_throughput}
execution: {cuda_graph: none}
seed: 1
)");
  const std::string a1   = test::run_shell(
        std::string(DBOSIM_BINARY) + " run " + step + " --out " + dir.path() + "/step --explain A1 2>&1", &rc);
  CHECK(rc == 0);
  // 4096 x 28672 + 4096 x 4097 / 2 pairs: the table at the 15863-token causal self-attention of equal pairs.
  CHECK(a1.find("attention_prefill: table attention_prefill[head_dim=192,heads=128] at 15863 tokens") !=
        std::string::npos);
}

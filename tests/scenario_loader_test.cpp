#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/ScenarioParams.hpp"
#include "config/ScheduleTable.hpp"
#include "models/All2AllTable.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using dbosim::InputError;
using dbosim::load_scenario;
using dbosim::test::TempDir;

namespace {
/** A valid EP8 decode scenario; each test changes one line of it. */
const std::string kBase = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload:
  phase: decode
  tokens_per_rank: 128
overlap:
  enable_dbo: true
  all2all_backend: deepep_low_latency
)";

std::string replace(std::string text, const std::string& from, const std::string& to)
{
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

/** Loads `yaml` and returns the error message; fails the test if it loads. */
std::string error_of(const std::string& yaml)
{
  TempDir dir;
  const std::string path = dir.write("case.yaml", yaml);
  try {
    load_scenario(path);
  } catch (const InputError& e) {
    std::string msg = e.what();
    CHECK(msg.rfind(path + ":", 0) == 0); // every message starts with the file
    return msg.substr(path.size());
  }
  FAIL("scenario loaded but should have been rejected:\n" << yaml);
  return "";
}
} // namespace

TEST_CASE("config::ScenarioLoader: defaults follow vLLM", "[quick]")
{
  TempDir dir;
  const auto s = load_scenario(dir.write("ok.yaml", kBase));
  CHECK(s.name == "ok");
  CHECK(s.overlap.dbo_decode_token_threshold == 32);
  CHECK(s.overlap.dbo_prefill_token_threshold == 512);
  CHECK(s.overlap.dbo_comm_sms == 20);
  CHECK(s.overlap.num_ubatches() == 2);
  CHECK_FALSE(s.overlap.async_combine);
  CHECK(s.execution.cuda_graph == dbosim::CudaGraphMode::full);
  CHECK(s.step.batch == 128); // decode: one request per token
  CHECK(s.model.num_routed_experts == 256);
  CHECK(s.hw.sm_count == 132);
  CHECK_FALSE(s.overlap.schedule.has_value()); // vLLM's rules
  CHECK(load_scenario(dir.write("tbo.yaml", replace(kBase, "  enable_dbo: true",
                                                    "  enable_dbo: true\n  schedule: "
                                                    "deepseek_decode")))
            .overlap.schedule == dbosim::sim::ScheduleId::deepseek_decode);
}

TEST_CASE("config::ScenarioLoader: errors name file, line, key and valid range", "[quick]")
{
  SECTION("unknown key")
  {
    auto msg = error_of(replace(kBase, "  enable_dbo: true", "  enable_dbo: true\n  enable_tbo: true"));
    CHECK(msg == ":10:3: overlap.enable_tbo: unknown key (valid: all2all_backend, async_combine, "
                 "dbo_comm_sms, dbo_decode_token_threshold, dbo_prefill_token_threshold, enable_dbo, schedule, "
                 "ubatch_size)");
  }
  SECTION("wrong type")
  {
    auto msg = error_of(replace(kBase, "enable_dbo: true", "enable_dbo: maybe"));
    CHECK(msg == ":9:15: overlap.enable_dbo: expected true or false (valid: true, false)");
  }
  SECTION("out of range")
  {
    auto msg = error_of(replace(kBase, "  enable_dbo: true", "  enable_dbo: true\n  dbo_comm_sms: -4"));
    CHECK(msg == ":10:17: overlap.dbo_comm_sms: -4 is out of range (valid: 0..1024)");
  }
  SECTION("integer expected")
  {
    auto msg = error_of(replace(kBase, "tokens_per_rank: 128", "tokens_per_rank: 12.5"));
    CHECK(msg == ":7:20: workload.tokens_per_rank: expected an integer, got '12.5' (valid: 1..1048576)");
  }
  SECTION("unknown enum value")
  {
    auto msg = error_of(replace(kBase, "deepep_low_latency", "pplx"));
    CHECK(msg ==
          ":10:20: overlap.all2all_backend: unknown value 'pplx' (valid: " + dbosim::models::all2all_names() + ")");
  }
  SECTION("unknown schedule names the schedule table")
  {
    auto msg = error_of(replace(kBase, "  enable_dbo: true", "  enable_dbo: true\n  schedule: trtllm_tbo"));
    std::string rows; // every row of the schedule table, in its order
    for (const dbosim::sim::ScheduleTraits& t : dbosim::sim::schedule_traits)
      rows += (rows.empty() ? "" : ", ") + std::string(t.name);
    CHECK(msg == ":10:13: overlap.schedule: unknown value 'trtllm_tbo' (valid: " + rows + ")");
  }
  SECTION("missing required key")
  {
    auto msg = error_of(replace(kBase, "  tokens_per_rank: 128\n", ""));
    CHECK(msg.find("workload.tokens_per_rank: required key is missing (valid: 1..1048576)") != std::string::npos);
  }
  SECTION("duplicate key")
  {
    auto msg = error_of(replace(kBase, "hardware: h200\n", "hardware: h200\nhardware: h100\n"));
    CHECK(msg == ":3:1: hardware: duplicate key");
  }
  SECTION("unknown model names the zoo")
  {
    auto msg = error_of(replace(kBase, "deepseek-v3", "deepseek-v9"));
    CHECK(msg.find(":1:8: model:") == 0);
    CHECK(msg.find("deepseek-v3") != std::string::npos);
  }
  SECTION("unknown hardware names the profiles")
  {
    auto msg = error_of(replace(kBase, "h200", "a100"));
    CHECK(msg.find(":2:11: hardware:") == 0);
    CHECK(msg.find("h100, h200, h800") != std::string::npos);
  }
}

TEST_CASE("config::ScenarioLoader: the rules vLLM enforces", "[quick]")
{
  SECTION("thresholds must be >= the number of micro-batches")
  {
    auto msg = error_of(replace(kBase, "  enable_dbo: true", "  ubatch_size: 2\n  dbo_decode_token_threshold: 1"));
    CHECK(msg == ":10:31: overlap.dbo_decode_token_threshold: must be >= the number of micro-batches (2) "
                 "(valid: >= 2)");
    auto msg2 = error_of(replace(kBase, "  enable_dbo: true", "  enable_dbo: true\n  dbo_prefill_token_threshold: 1"));
    CHECK(msg2.find("overlap.dbo_prefill_token_threshold: must be >= the number of micro-batches (2)") !=
          std::string::npos);
  }
  SECTION("comm SMs must leave SMs for compute")
  {
    auto msg = error_of(replace(kBase, "  enable_dbo: true", "  enable_dbo: true\n  dbo_comm_sms: 132"));
    CHECK(msg == ":10:17: overlap.dbo_comm_sms: 132 comm SMs leave no SM for compute on h200 (132 SMs) "
                 "(valid: 0..131)");
  }
  SECTION("EP must divide the routed experts")
  {
    auto yaml = replace(replace(kBase, "gpus_per_node: 8", "gpus_per_node: 6"), "{dp: 8, ep: 8, tp: 1}",
                        "{dp: 6, ep: 6, tp: 1}");
    auto msg  = error_of(yaml);
    CHECK(msg == ":4:23: parallel.ep: ep 6 does not divide the 256 routed experts of deepseek-v3 (valid: a divisor "
                 "of the routed expert count, or cluster.placement eplb with redundant_experts 2 (routed + redundant "
                 "divisible by ep))");
  }
  SECTION("DBO needs EP or DP")
  {
    auto yaml = replace(replace(kBase, "gpus_per_node: 8", "gpus_per_node: 1"), "{dp: 8, ep: 8, tp: 1}",
                        "{dp: 1, ep: 1, tp: 1}");
    auto msg  = error_of(yaml);
    CHECK(msg == ":9:15: overlap.enable_dbo: DBO needs expert or data parallelism (valid: ep > 1 or dp > 1)");
  }
  SECTION("DBO needs a DeepEP backend")
  {
    auto msg = error_of(replace(kBase, "deepep_low_latency", "nccl"));
    const std::string dbo_rows =
        dbosim::models::all2all_names_where([](const dbosim::models::All2AllTraits& t) { return t.dbo; });
    CHECK(msg == ":10:20: overlap.all2all_backend: DBO needs a DeepEP all-to-all backend (valid: " + dbo_rows + ")");
    CHECK(dbo_rows.find("nccl") == std::string::npos);
  }
  SECTION("dp x tp must fill the cluster")
  {
    auto msg = error_of(replace(kBase, "{dp: 8, ep: 8, tp: 1}", "{dp: 4, ep: 8, tp: 1}"));
    CHECK(msg.find("parallel.dp: dp x tp = 4 x 1 = 4 must equal the cluster's GPUs") != std::string::npos);
  }
}

TEST_CASE("config::ScenarioParams: every parameter is declared once with doc and range", "[quick]")
{
  std::set<std::string> keys;
  for (const auto& p : dbosim::scenario_params()) {
    INFO(p.key);
    CHECK(keys.insert(p.key).second);
    CHECK_FALSE(p.doc.empty());
    CHECK_FALSE(p.valid.empty());
    CHECK_FALSE(p.default_text.empty());
  }
  const std::string table = dbosim::format_param_table();
  CHECK(table.find("overlap.dbo_comm_sms") != std::string::npos);
  CHECK(table.find("VLLM_DBO_COMM_SMS") != std::string::npos);
}

// VLLM_DBO_COMM_SMS left unset takes vLLM's default on the profile's platform (hwprofiles/*.yaml `platform:`): 20 SMs
// on CUDA (no platform section), 64 CUs on ROCm; a value the scenario gives is kept.
TEST_CASE("config::ScenarioLoader: dbo_comm_sms defaults to the profile's platform rule", "[quick]")
{
  TempDir dir;
  CHECK(load_scenario(dir.write("cuda.yaml", kBase)).overlap.dbo_comm_sms == 20);
  const std::string rocm = replace(kBase, "hardware: h200", "hardware: mi300x");
  const auto s           = load_scenario(dir.write("rocm.yaml", rocm));
  CHECK(s.hw.platform.stack == dbosim::models::Platform::rocm);
  CHECK(s.overlap.dbo_comm_sms == 64);
  CHECK_FALSE(s.hw.platform.deepep_ht_dbo_partition);
  CHECK(s.hw.sources.count("platform.dbo_comm_sms") == 1);
  CHECK(load_scenario(
            dir.write("set.yaml", replace(rocm, "  enable_dbo: true", "  enable_dbo: true\n  dbo_comm_sms: 32")))
            .overlap.dbo_comm_sms == 32);
}

/* dbosim tests — plan/LaunchCommand: the vLLM launch of a scenario (flags, environment, per-node placeholders, notes
 * for what vLLM has no flag for), on the shipped scenarios. */
#include "TempDir.hpp"
#include "config/EngineTable.hpp"
#include "config/ScenarioLoader.hpp"
#include "plan/LaunchCommand.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <string>

using dbosim::load_scenario;
using dbosim::Scenario;
using dbosim::plan::format_launch;
using dbosim::plan::launch_command;
using dbosim::plan::launch_json;

namespace {

Scenario shipped(const std::string& name)
{
  return load_scenario(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/" + name + ".yaml");
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

/** The default scenario's layout with another model and GPU and extra YAML (precision keys), loaded as a user would. */
Scenario fp4_scenario(const std::string& model, const std::string& hardware, const std::string& extra)
{
  const dbosim::test::TempDir dir;
  return load_scenario(dir.write("s.yaml", "model: " + model + "\nhardware: " + hardware +
                                               "\ncluster: {nodes: 1, gpus_per_node: 8}\n"
                                               "parallel: {dp: 8, ep: 8, tp: 1}\n"
                                               "workload: {phase: decode, tokens_per_rank: 16, context_len: 1024}\n"
                                               "overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}\n" +
                                               extra));
}

} // namespace

TEST_CASE("launch: the default scenario's vllm serve flags and environment", "[quick]")
{
  const auto l = launch_command(shipped("default"));
  REQUIRE(l.nodes.size() == 1);
  const std::string& c = l.nodes[0];
  CHECK(c.rfind("vllm serve deepseek-ai/DeepSeek-V3 ", 0) == 0);
  for (const char* flag :
       {"--tensor-parallel-size 1", "--data-parallel-size 8", "--data-parallel-size-local 8",
        "--enable-expert-parallel", "--all2all-backend deepep_low_latency", "--enable-dbo",
        "--dbo-decode-token-threshold 32", "--dbo-prefill-token-threshold 512", "--max-num-seqs 256",
        "--max-num-batched-tokens 8192", "--compilation-config '{\"cudagraph_mode\":\"FULL_AND_PIECEWISE\"}'"})
    CHECK(has(c, flag));
  CHECK_FALSE(has(c, "--speculative-config"));
  CHECK_FALSE(has(c, "--data-parallel-address"));
  CHECK_FALSE(has(c, "prefix-caching")); // vLLM V1 caches prefixes by default
  REQUIRE(l.env.size() == 1);
  CHECK(l.env[0].first == "VLLM_DBO_COMM_SMS");
  CHECK(l.env[0].second == "20");
  const auto j = launch_json(l);
  CHECK(j["command"] == c);
  CHECK(j["env"]["VLLM_DBO_COMM_SMS"] == "20");
  CHECK(has(format_launch(l), "export VLLM_DBO_COMM_SMS=20\nvllm serve "));
}

TEST_CASE("launch: DBO off drops the DBO flags and VLLM_DBO_COMM_SMS", "[quick]")
{
  Scenario s                         = shipped("default");
  s.overlap.enable_dbo               = false;
  s.execution.cuda_graph             = dbosim::CudaGraphMode::none;
  s.scheduler.async_scheduling       = true;
  s.scheduler.enable_chunked_prefill = false;
  s.scheduler.enable_prefix_caching  = false;
  const auto l                       = launch_command(s);
  const std::string& c               = l.nodes.at(0);
  CHECK_FALSE(has(c, "dbo"));
  CHECK(l.env.empty());
  CHECK(has(c, "--enable-expert-parallel"));
  CHECK(has(c, "--enforce-eager"));
  CHECK(has(c, "--async-scheduling"));
  CHECK(has(c, "--no-enable-chunked-prefill"));
  CHECK(has(c, "--no-enable-prefix-caching"));
  CHECK_FALSE(has(c, "--compilation-config"));
}

TEST_CASE("launch: a multi-node scenario has one command per node with address and start-rank placeholders", "[quick]")
{
  const auto l = launch_command(shipped("dsv3_decode_ep32_dbo"));
  REQUIRE(l.nodes.size() == 4);
  CHECK(has(l.nodes[0], "--data-parallel-size 32 --data-parallel-size-local 8"));
  CHECK(has(l.nodes[0], "--data-parallel-address HEAD_IP"));
  CHECK_FALSE(has(l.nodes[0], "--headless"));
  CHECK_FALSE(has(l.nodes[0], "--data-parallel-start-rank"));
  for (int n = 1; n < 4; ++n) {
    CHECK(has(l.nodes[n], "--headless"));
    CHECK(has(l.nodes[n], "--data-parallel-start-rank " + std::to_string(8 * n)));
    CHECK(has(l.nodes[n], "--data-parallel-address HEAD_IP"));
  }
  const std::string text = format_launch(l);
  CHECK(has(text, "# node 3\n"));
  CHECK(has(text, "HEAD_IP is the head node's address"));
}

TEST_CASE("launch: an MTP scenario has the speculative config", "[quick]")
{
  const auto l = launch_command(shipped("dsv3_decode_ep8_mtp"));
  CHECK(has(l.nodes.at(0), "--speculative-config '{\"method\":\"deepseek_mtp\",\"num_speculative_tokens\":1}'"));
  // The acceptance rate is measured, not set: a note, never "not a flag" (a plan may sweep it).
  CHECK(has(format_launch(l), "# speculative_config.acceptance_rate is measured by vLLM's spec-decode metrics"));
  CHECK_FALSE(has(format_launch(l), "not a vLLM flag"));
}

TEST_CASE("launch: what vLLM has no flag for is a comment, never a flag", "[quick]")
{
  Scenario s              = shipped("default");
  s.overlap.schedule      = dbosim::sim::ScheduleId::deepseek_decode;
  s.overlap.async_combine = true;
  s.parallel.backend      = dbosim::models::All2AllBackend::nccl;
  const auto l            = launch_command(s);
  const std::string text  = format_launch(l);
  CHECK(has(text, "# not a vLLM flag: overlap.schedule deepseek_decode"));
  CHECK(has(text, "# not a vLLM flag: overlap.async_combine"));
  CHECK(has(l.nodes.at(0), "--all2all-backend allgather_reducescatter"));
  CHECK_FALSE(has(l.nodes.at(0), "deepseek_decode"));
  CHECK_FALSE(has(l.nodes.at(0), "nccl"));
}

TEST_CASE("launch: async combine is vLLM 2026-09's deepep_v2, and every engine decides it in one place", "[quick]")
{
  Scenario s             = shipped("dsv3_decode_ep8_async_combine"); // deepep_v2 on the default vLLM (0.11)
  const std::string v011 = format_launch(launch_command(s));
  CHECK(has(v011, "# not a vLLM flag: overlap.async_combine"));
  s.engine                = dbosim::find_engine("vllm@2026-09");
  const std::string v2609 = format_launch(launch_command(s));
  CHECK(has(v2609, "--all2all-backend deepep_v2"));
  CHECK_FALSE(has(v2609, "overlap.async_combine")); // the backend's finalize_async is what runs it
  s.parallel.backend = dbosim::models::All2AllBackend::deepep_low_latency;
  CHECK(has(format_launch(launch_command(s)), "# not a vLLM flag: overlap.async_combine"));
  s.engine = dbosim::find_engine("sglang");
  CHECK(has(format_launch(launch_command(s)), "# not a SGLang flag: overlap.async_combine"));

  // KV admission: one decision for vLLM and SGLang (no flag for the other policy), one note each; TensorRT-LLM
  // spells both policies.
  s.overlap.async_combine  = false;
  s.scheduler.kv_admission = dbosim::KvAdmission::reserve;
  for (const char* engine : {"vllm", "sglang"}) {
    s.engine               = dbosim::find_engine(engine);
    const std::string text = format_launch(launch_command(s));
    const std::string note = fmt::format("# not a {} flag: scheduler.kv_admission reserve", s.engine->label);
    INFO(text);
    CHECK(has(text, note));
    CHECK(text.find(note) == text.rfind(note));
  }
  s.engine = dbosim::find_engine("trtllm");
  CHECK_FALSE(has(format_launch(launch_command(s)), "scheduler.kv_admission"));
}

TEST_CASE("launch: every shipped scenario gives a launch", "[quick]")
{
  for (const auto& e : std::filesystem::directory_iterator(std::string(DBOSIM_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".yaml")
      continue;
    INFO(e.path().filename().string());
    dbosim::plan::LaunchCommand l;
    REQUIRE_NOTHROW(l = launch_command(load_scenario(e.path().string())));
    REQUIRE_FALSE(l.nodes.empty());
    for (const auto& c : l.nodes)
      CHECK(c.rfind("vllm serve ", 0) == 0);
    for (const auto& n : l.notes)
      CHECK(n.rfind("# ", 0) == 0);
  }
}

TEST_CASE("launch: a 256-node launch prints nodes 0, 1 and the last, and keeps every node in launch.nodes", "[quick]")
{
  const auto l = launch_command(shipped("dsv3_decode_ep1024_gb200_zipf_eplb"));
  REQUIRE(l.nodes.size() == 256);
  CHECK(has(l.nodes[255], "--data-parallel-start-rank 1020"));
  const std::string text = format_launch(l);
  CHECK(has(text, "# node 0\n" + l.nodes[0] + "\n# node 1\n" + l.nodes[1] + "\n"));
  CHECK(has(text, "# nodes 2 .. 254 (253 nodes): node 1's command with their own --data-parallel-start-rank"));
  CHECK(has(text, "# node 255\n" + l.nodes[255] + "\n"));
  CHECK_FALSE(has(text, "# node 2\n"));
  CHECK_FALSE(has(text, l.nodes[2]));
  CHECK(dbosim::plan::launch_json(l).at("nodes").size() == 256);
}

TEST_CASE("launch: EPLB placement is --enable-eplb, with its redundant experts when there are any", "[quick]")
{
  Scenario s = shipped("default");
  CHECK_FALSE(has(launch_command(s).nodes.at(0), "eplb")); // contiguous placement: vLLM's default, no EPLB
  s.cluster.routing.placement = dbosim::models::Placement::eplb;
  const std::string plain     = launch_command(s).nodes.at(0);
  CHECK(has(plain, " --enable-eplb"));
  CHECK_FALSE(has(plain, "--eplb-config"));
  s.cluster.routing.redundant_experts = 32;
  CHECK(has(launch_command(s).nodes.at(0), " --enable-eplb --eplb-config '{\"num_redundant_experts\":32}'"));
}

TEST_CASE("launch: the KV admission is TensorRT-LLM's capacity policy, and a note where vLLM has no flag for it",
          "[quick]")
{
  Scenario s = shipped("default");
  s.engine   = dbosim::find_engine("trtllm");
  REQUIRE(s.engine);
  CHECK(!has(format_launch(launch_command(s)), "capacity_scheduler_policy")); // the default reserves
  s.scheduler.kv_admission = dbosim::KvAdmission::preempt;
  CHECK(has(format_launch(launch_command(s)), "scheduler_config: {capacity_scheduler_policy: MAX_UTILIZATION}"));
  CHECK(!has(format_launch(launch_command(s)), "not a TensorRT-LLM flag: scheduler.kv_admission"));

  s.engine = dbosim::find_engine("vllm");
  CHECK(!has(format_launch(launch_command(s)), "scheduler.kv_admission")); // preempt is vLLM's own
  s.scheduler.kv_admission = dbosim::KvAdmission::reserve;
  CHECK(has(format_launch(launch_command(s)), "not a vLLM flag: scheduler.kv_admission reserve"));
}

TEST_CASE("launch: the quantized checkpoint and the precision flags each engine takes", "[quick]")
{
  // NVIDIA's NVFP4 R1 (FP8 KV from its kv_cache_quant_algo) with the NVFP4 dispatch.
  Scenario s      = fp4_scenario("deepseek-r1-fp4", "b200", "precision: {dispatch_dtype: nvfp4}\n");
  const auto vllm = launch_command(s);
  CHECK(vllm.nodes.at(0).rfind("vllm serve nvidia/DeepSeek-R1-FP4 ", 0) == 0);
  CHECK(has(vllm.nodes.at(0), " --kv-cache-dtype fp8"));
  CHECK_FALSE(has(vllm.nodes.at(0), "--quantization")); // vLLM reads modelopt_fp4 from the checkpoint
  CHECK(has(format_launch(vllm), "export VLLM_DEEPEPLL_NVFP4_DISPATCH=1\n"));

  s.engine                 = dbosim::find_engine("sglang");
  const std::string sglang = format_launch(launch_command(s));
  CHECK(has(sglang, "--model-path nvidia/DeepSeek-R1-FP4 "));
  CHECK(has(sglang, " --kv-cache-dtype fp8_e4m3"));
  CHECK(has(sglang, " --quantization modelopt_fp4"));
  CHECK(has(sglang, "# not a SGLang flag: precision.dispatch_dtype nvfp4"));

  s.engine                 = dbosim::find_engine("trtllm");
  const std::string trtllm = format_launch(launch_command(s));
  CHECK(has(trtllm, "trtllm-serve nvidia/DeepSeek-R1-FP4 "));
  CHECK(has(trtllm, "kv_cache_config: {dtype: fp8}"));
  CHECK(has(trtllm, "--extra_llm_api_options extra-llm-api-config.yml"));

  // The NVFP4 dispatch switch is DeepEP low-latency's: another backend gets a note, never the variable.
  s = fp4_scenario("deepseek-r1-fp4", "b200", "precision: {dispatch_dtype: nvfp4}\nexecution: {cuda_graph: full}\n");
  s.parallel.backend   = dbosim::models::All2AllBackend::deepep_high_throughput;
  const std::string ht = format_launch(launch_command(s));
  CHECK_FALSE(has(ht, "export VLLM_DEEPEPLL_NVFP4_DISPATCH"));
  CHECK(has(ht, "# not a vLLM flag: precision.dispatch_dtype nvfp4 with deepep_high_throughput"));

  // AMD's MXFP4 R1: the checkpoint names its format (quark); a KV dtype set by the scenario is a flag, a weight format
  // the scenario changes is a note (it needs another checkpoint).
  const Scenario amd =
      fp4_scenario("deepseek-r1-mxfp4", "mi355x", "precision: {kv_cache_dtype: fp8, shared_experts: fp8_block}\n");
  const std::string amd_text = format_launch(launch_command(amd));
  CHECK(has(amd_text, "vllm serve amd/DeepSeek-R1-0528-MXFP4-ASQ "));
  CHECK(has(amd_text, " --kv-cache-dtype fp8"));
  CHECK(has(amd_text, "# precision.shared_experts fp8_block: the weights' format is the checkpoint's"));
  CHECK_FALSE(has(amd_text, "NVFP4"));

  // The BF16-KV FP8 checkpoint of the shipped scenarios: none of these flags.
  const std::string plain = format_launch(launch_command(shipped("default")));
  for (const char* flag : {"--kv-cache-dtype", "--quantization", "NVFP4_DISPATCH", "precision."})
    CHECK_FALSE(has(plain, flag));
}

/* dbosim tests — overlap.schedule through the CLI: run reports the schedule it names, a sweep takes it as an axis,
 * and a serving run's steps use it (its split steps run another schedule than vLLM's dbo). */
#include "RunShell.hpp"
#include "TempDir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <string>

namespace {

using dbosim::test::run_shell;

const std::string kStep = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 64, context_len: 1024}
overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}
)";

std::string slurp(const std::string& path)
{
  std::ifstream in(path);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string run_dbosim(const std::string& args, int* rc)
{
  return run_shell(std::string(DBOSIM_BINARY) + " " + args + " 2>&1", rc);
}

} // namespace

TEST_CASE("cli: overlap.schedule in run and sweep", "[quick]")
{
  dbosim::test::TempDir dir;
  int rc           = 0;
  std::string yaml = kStep;
  yaml.replace(yaml.find("overlap: {"), 10, "overlap: {schedule: deepseek_decode, ");
  const std::string out = run_dbosim("run " + dir.write("dd.yaml", yaml) + " --out " + dir.path() + "/run", &rc);
  REQUIRE(rc == 0);
  CHECK(out.find("schedule deepseek_decode  micro-batches 2") != std::string::npos);
  CHECK(nlohmann::json::parse(slurp(dir.path() + "/run/summary.json"))["schedule"] == "deepseek_decode");

  const std::string sweep = kStep + "sweep:\n  overlap.schedule: [dbo, deepseek_decode, deepseek_prefill]\n";
  run_dbosim("sweep " + dir.write("sweep.yaml", sweep) + " -j 1 --out " + dir.path() + "/sweep", &rc);
  REQUIRE(rc == 0);
  const std::string csv = slurp(dir.path() + "/sweep/sweep.csv");
  CHECK(csv.rfind("point,overlap.schedule,status,step_time_us", 0) == 0);
  CHECK(csv.find("\n1,deepseek_decode,ok,") != std::string::npos);
  CHECK(csv.find("\n2,deepseek_prefill,ok,") != std::string::npos);
}

TEST_CASE("cli: overlap.schedule in a serving run", "[quick]")
{
  dbosim::test::TempDir dir;
  int rc                   = 0;
  const std::string base   = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 16, max_concurrency: 16, random_input_len: 512,
           random_output_len: 8}
serving: {step_trace: false}
seed: 1
)";
  const std::string dbo    = base + "overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}\n";
  const std::string prefil = base + "overlap: {enable_dbo: true, all2all_backend: deepep_low_latency, "
                                    "schedule: deepseek_prefill}\n";
  run_dbosim("run " + dir.write("dbo.yaml", dbo) + " --out " + dir.path() + "/dbo", &rc);
  REQUIRE(rc == 0);
  run_dbosim("run " + dir.write("prefill.yaml", prefil) + " --out " + dir.path() + "/prefill", &rc);
  REQUIRE(rc == 0);
  const auto a = nlohmann::json::parse(slurp(dir.path() + "/dbo/summary.json"))["serving"];
  const auto b = nlohmann::json::parse(slurp(dir.path() + "/prefill/summary.json"))["serving"];
  // The prefill steps (16 x 512 tokens over 8 ranks: above the 512-token threshold) split and run another schedule.
  CHECK(a["completed"] == 16);
  CHECK(b["completed"] == 16);
  CHECK(a["duration"].get<double>() != b["duration"].get<double>());
}

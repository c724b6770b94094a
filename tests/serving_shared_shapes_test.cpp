/* Search at speed without changing an answer: a scenario's step fingerprint ignores exactly what only the request
 * stream reads; oracles of the same fingerprint share simulated shapes within a process; the replay oracle gives the
 * SimGrid oracle's step times; and a sweep or a serving run prints the same bytes on either engine. */
#include "RunShell.hpp"
#include "TempDir.hpp"
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>

using namespace dbosim;
using namespace dbosim::serving;

namespace {

std::string scenario_text(const std::string& workload_extra, const std::string& overlap, int seed)
{
  return "model: deepseek-v3\nhardware: h200\ncluster: {nodes: 1, gpus_per_node: 8}\nparallel: {dp: 8, ep: 8, tp: 1}\n"
         "workload: {phase: decode, tokens_per_rank: 1" +
         workload_extra + "}\noverlap: {" + overlap + "}\nseed: " + std::to_string(seed) + "\n";
}

std::string slurp(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("serving::fingerprint: request keys leave it, every step key changes it", "[quick]")
{
  test::TempDir dir;
  const std::string ll = "enable_dbo: true, all2all_backend: deepep_low_latency";
  auto fp              = [&](const std::string& name, const std::string& text) {
    return load_scenario(dir.write(name, text)).step_fingerprint;
  };
  const std::string base = fp("a.yaml", scenario_text(", num_prompts: 8, max_concurrency: 4", ll, 1));
  CHECK(!base.empty());
  CHECK(fp("b.yaml", scenario_text(", num_prompts: 16, max_concurrency: 8, random_input_len: 300, "
                                   "random_output_len: 9, random_range_ratio: 0.5, request_rate: 4",
                                   ll, 1)) == base);
  CHECK(fp("c.yaml", scenario_text(", num_prompts: 8, max_concurrency: 4", "enable_dbo: false", 1)) != base);
  CHECK(fp("d.yaml", scenario_text(", num_prompts: 8, max_concurrency: 4, context_len: 2048", ll, 1)) != base);
  CHECK(fp("e.yaml", scenario_text(", num_prompts: 8, max_concurrency: 4", ll, 2)) != base);
  CHECK(fp("f.yaml", scenario_text(", num_prompts: 8, max_concurrency: 4", ll + ", dbo_comm_sms: 16", 1)) != base);
}

TEST_CASE("serving::EngineOracle: the replay oracle gives SimGrid's step times, and shares shapes by fingerprint",
          "[quick]")
{
  test::TempDir dir;
  // A seed no other test uses: the shared shapes are this process's.
  const Scenario s    = load_scenario(dir.write(
         "s.yaml", scenario_text(", num_prompts: 2", "enable_dbo: true, all2all_backend: deepep_low_latency", 424242)));
  const Scenario twin = load_scenario(
      dir.write("t.yaml", scenario_text(", num_prompts: 5, max_concurrency: 2",
                                        "enable_dbo: true, all2all_backend: deepep_low_latency", 424242)));
  REQUIRE(s.step_fingerprint == twin.step_fingerprint);
  const std::vector<StepKey> keys{{{models::Phase::decode, 64, 64, 1024}},
                                  {{models::Phase::decode, 8, 8, 512}},
                                  {{models::Phase::prefill, 512, 2, 256}}};
  EngineOracle sg(s, 2, {}, sim::EngineKind::simgrid);
  EngineOracle fast(s, 2, {}, sim::EngineKind::replay, true);
  const std::vector<StepTime> a = sg.simulate(keys);
  const std::vector<StepTime> b = fast.simulate(keys);
  CHECK(fast.replayed() == 3);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO(keys[i].to_string());
    CHECK(b[i].step_us == Approx(a[i].step_us).margin(1e-6));
    CHECK(b[i].exposed_comm_us == Approx(a[i].exposed_comm_us).margin(1e-6));
    CHECK(b[i].ubatches == a[i].ubatches);
  }
  EngineOracle again(twin, 2, {}, sim::EngineKind::replay, true); // another point of the same steps: none simulated
  const std::vector<StepTime> c = again.simulate(keys);
  CHECK(again.simulated() == 0);
  EngineOracle alone(twin, 2, {}, sim::EngineKind::replay); // not sharing: simulates its own
  alone.simulate(keys);
  CHECK(alone.simulated() == 3);
  for (std::size_t i = 0; i < keys.size(); ++i)
    CHECK(c[i].step_us == b[i].step_us);
}

TEST_CASE("serving::EngineOracle: oracles sharing a fingerprint's kept costs give each shape's own rank work and step "
          "time, bit for bit",
          "[quick]")
{
  test::TempDir dir;
  // A seed no other test uses; MTP, so that the draft's memo is shared too.
  const std::string mtp = "enable_dbo: true, all2all_backend: deepep_low_latency}\nspeculative_config: {method: "
                          "deepseek_mtp, num_speculative_tokens: 1, acceptance_rate: 0.8";
  const Scenario s      = load_scenario(dir.write("s.yaml", scenario_text(", num_prompts: 2", mtp, 434343)));
  const Scenario twin   = load_scenario(dir.write("t.yaml", scenario_text(", num_prompts: 7", mtp, 434343)));
  REQUIRE(s.step_fingerprint == twin.step_fingerprint);
  // The first oracle fills the kept costs at shapes whose kernels' keys the second's shapes share (equal tokens,
  // other requests and KV lengths), and one the second does not ask for.
  const std::vector<StepKey> first{{{models::Phase::decode, 64, 32, 1024}},
                                   {{models::Phase::prefill, 512, 2, 300}},
                                   {{models::Phase::decode, 16, 16, 2000}}};
  const std::vector<StepKey> second{{{models::Phase::decode, 64, 32, 777}},
                                    {{models::Phase::decode, 64, 20, 4000}},
                                    {{models::Phase::prefill, 512, 3, 900}}};
  EngineOracle filler(s, 1, {}, sim::EngineKind::replay, true);
  for (const StepKey& k : first)
    filler.rank_work(k);
  filler.simulate(first);
  EngineOracle shared(twin, 1, {}, sim::EngineKind::replay, true);
  EngineOracle alone(twin, 1, {}, sim::EngineKind::replay); // its own costs, none kept from another oracle
  const std::vector<StepTime> a = shared.simulate(second);
  const std::vector<StepTime> b = alone.simulate(second);
  for (std::size_t i = 0; i < second.size(); ++i) {
    INFO(second[i].to_string());
    const RankWork x = shared.rank_work(second[i]), y = alone.rank_work(second[i]);
    CHECK(x.attention_us == y.attention_us);
    CHECK(x.step_work_us == y.step_work_us);
    CHECK(x.draft_us == y.draft_us);
    CHECK(x.draft_us > 0);
    CHECK(a[i].step_us == b[i].step_us);
    CHECK(a[i].draft_us == b[i].draft_us);
  }
}

TEST_CASE("serving::cli: sweeps and serving runs print the same bytes on SimGrid and on the replay", "[slow]")
{
  test::TempDir dir;
  const std::string exe = DBOSIM_BINARY;
  int rc                = 0;
  const std::string serving =
      dir.write("s.yaml", scenario_text(", num_prompts: 6, max_concurrency: 3, random_input_len: 300, "
                                        "random_output_len: 8",
                                        "enable_dbo: true, all2all_backend: deepep_low_latency", 3) +
                              "sweep:\n  workload.max_concurrency: [1, 3]\n  overlap.enable_dbo: [false, true]\n");
  // Both engines into DIR/<prefix>simgrid and DIR/<prefix>auto; the two sweep.csv files.
  auto sweep_both = [&](const std::string& file, const std::string& prefix) {
    for (const char* e : {"simgrid", "auto"}) {
      test::run_shell(
          exe + " sweep " + file + " -j 2 --engine " + e + " --out " + dir.path() + "/" + prefix + e + " 2>&1", &rc);
      REQUIRE(rc == 0);
    }
    return std::pair{slurp(dir.path() + "/" + prefix + "simgrid/sweep.csv"),
                     slurp(dir.path() + "/" + prefix + "auto/sweep.csv")};
  };
  const auto [csv, csv_auto] = sweep_both(serving, "");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
  CHECK(csv == csv_auto);
  CHECK(std::filesystem::exists(dir.path() + "/simgrid/points/0000/trace.json") == false); // serving: no trace
  // One-step points, one of them an SM-resident backend under DBO (auto runs it on SimGrid, in a child).
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  const std::string base((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string step =
      dir.write("step.yaml", base + "sweep:\n  workload.tokens_per_rank: [16, 64, 128]\n"
                                    "  overlap.all2all_backend: [deepep_low_latency, deepep_high_throughput]\n");
  const auto [step_csv, step_csv_auto] = sweep_both(step, "step_");
  CHECK(std::count(step_csv.begin(), step_csv.end(), '\n') == 7);
  CHECK(step_csv == step_csv_auto);
  CHECK(std::filesystem::exists(dir.path() + "/step_simgrid/points/0000/trace.json"));
  CHECK(!std::filesystem::exists(dir.path() + "/step_auto/points/0000/trace.json"));
  const std::string summary = slurp(dir.path() + "/step_auto/points/0000/summary.json");
  CHECK(summary.find("\"engine\": \"replay\"") != std::string::npos);
}

/* The engine on shipped scenarios with the real cost models: DBO's two sides, and byte-identical repeated runs.
 * SimGrid runs one simulation per process, so a comparison runs its second simulation in a forked child. */
#include "InChild.hpp"
#include "TempDir.hpp"
#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/output/Metrics.hpp"
#include "sim/plan/StepPlanBuilder.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

const std::string source_dir = DBOSIM_SOURCE_DIR;

double simulate_step_us(const Scenario& s)
{
  const StepPlan plan  = build_step_plan(s, s.step, model_cost_source(s));
  const Schedule sched = build_schedule(plan);
  return run_step(plan, sched).timeline.step_time();
}

/** The step time of `s` simulated in a forked child (a fresh SimGrid). */
double simulate_step_us_in_child(const Scenario& s)
{
  const double us = test::in_child<double>([&] { return simulate_step_us(s); });
  REQUIRE(us > 0);
  return us;
}

Scenario ep32_decode(int tokens_per_rank)
{
  Scenario s    = load_scenario(source_dir + "/scenarios/dsv3_decode_ep32_dbo.yaml");
  s.step.tokens = tokens_per_rank;
  s.step.batch  = tokens_per_rank;
  return s;
}

std::string slurp(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("sim::scenario: DBO beats no-DBO on a comm-heavy decode (DeepSeek-V3 EP32, 256 tokens, low-latency)",
          "[quick]")
{
  Scenario dbo = ep32_decode(256);
  REQUIRE(dbo.overlap.dbo_enabled());
  Scenario plain           = dbo;
  plain.overlap.enable_dbo = false;
  const double plain_us    = simulate_step_us_in_child(plain);
  const double dbo_us      = simulate_step_us(dbo);
  INFO("no DBO " << plain_us << " us, DBO " << dbo_us << " us");
  CHECK(dbo_us < 0.9 * plain_us);
}

TEST_CASE("sim::scenario: DBO loses on a tiny batch, where the split's overheads dominate", "[quick]")
{
  // The smallest batch DBO splits: the decode threshold. Each micro-batch re-reads every weight and pays every
  // collective's latency; there is too little work to hide.
  Scenario dbo             = ep32_decode(0);
  dbo.step.tokens          = dbo.overlap.dbo_decode_token_threshold;
  dbo.step.batch           = dbo.overlap.dbo_decode_token_threshold;
  Scenario plain           = dbo;
  plain.overlap.enable_dbo = false;
  const double plain_us    = simulate_step_us_in_child(plain);
  const double dbo_us      = simulate_step_us(dbo);
  INFO("no DBO " << plain_us << " us, DBO " << dbo_us << " us");
  CHECK(dbo_us > plain_us);
}

TEST_CASE("sim::scenario: piecewise graphs count the attention op's kernels as eager, and the MoE op's under DeepEP HT",
          "[quick]")
{
  Scenario s             = load_scenario(source_dir + "/scenarios/default.yaml");
  s.step.tokens          = 4;
  s.step.batch           = 4;
  s.execution.cuda_graph = CudaGraphMode::piecewise;
  const StepPlan p       = build_step_plan(s, s.step, model_cost_source(s));
  REQUIRE(p.host.piecewise);
  REQUIRE_FALSE(p.host.cuda_graph);
  const UbatchCosts& u = p.ubatches[0];
  // MLA decode: the KV write ends A0; q_nope x W_UK, FlashMLA's two kernels and x W_UV open A1; o_proj launches the
  // layer's one piece, which runs through the MoE to the next layer's KV write.
  CHECK(u.find(true, OpKind::A0)->eager_kernels == 1);
  CHECK(u.find(true, OpKind::A0)->graph_launches == 0);
  CHECK(u.find(true, OpKind::A1)->eager_kernels == 4);
  CHECK(u.find(true, OpKind::A1)->graph_launches == 1);
  for (OpKind k : {OpKind::D, OpKind::MLP, OpKind::S, OpKind::C})
    CHECK(u.find(true, k)->eager_kernels + u.find(true, k)->graph_launches == 0);

  s.parallel.backend   = models::All2AllBackend::deepep_high_throughput; // vLLM splits the fused-MoE op for it
  s.overlap.enable_dbo = false;
  const StepPlan ht    = build_step_plan(s, s.step, model_cost_source(s));
  REQUIRE(ht.host.piecewise);
  const UbatchCosts& h = ht.ubatches[0];
  CHECK(h.find(true, OpKind::A0)->graph_launches == 1); // after the previous layer's combine
  CHECK(h.find(true, OpKind::A1)->eager_kernels == 5);  // + the router's top-k
  CHECK(h.find(true, OpKind::A1)->graph_launches == 1);
  for (OpKind k : {OpKind::D, OpKind::MLP, OpKind::S, OpKind::C})
    CHECK(h.find(true, k)->eager_kernels == h.find(true, k)->kernels);

  s.step.tokens = s.step.batch = 1024; // past vLLM's largest capture size: eager
  CHECK_FALSE(build_step_plan(s, s.step, model_cost_source(s)).host.piecewise);
}

TEST_CASE("sim::scenario: a small-batch decode step under piecewise graphs lies between full graphs and eager",
          "[quick]")
{
  // DeepSeek-V3 EP8, 4 tokens per rank: the expert weights set the GPU's pace (~0.5 ms a layer), ahead of every mode's
  // host; the modes differ in their kernels' GPU gaps and launches.
  Scenario s    = load_scenario(source_dir + "/scenarios/default.yaml");
  s.step.tokens = 4;
  s.step.batch  = 4;
  auto step_us  = [&](CudaGraphMode m) {
    s.execution.cuda_graph = m;
    return simulate_step_us_in_child(s);
  };
  const double full = step_us(CudaGraphMode::full), piecewise = step_us(CudaGraphMode::piecewise),
               eager = step_us(CudaGraphMode::none);
  INFO("full " << full << " us, piecewise " << piecewise << " us, eager " << eager << " us");
  CHECK(full < piecewise);
  CHECK(piecewise < eager);
  // Per layer, piecewise adds the attention op's 5 eager kernels' extra gap and one piece boundary (~5.5 us on the
  // H200 profile), eager every kernel's extra gap (~34 x 0.86 us): piecewise sits much nearer full than eager.
  CHECK(piecewise - full < 0.5 * (eager - full));
}

TEST_CASE("sim::scenario: repeated runs write byte-identical summary and trace", "[quick]")
{
  const std::string scenario = source_dir + "/scenarios/dsv3_prefill_ep32_dbo.yaml";
  const std::string out      = "sim_repeat_out";
  for (const char* run : {"a", "b"}) {
    const std::string cmd =
        std::string(DBOSIM_BINARY) + " run " + scenario + " --out " + out + "/" + run + " > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  for (const char* file : {"summary.json", "trace.json"}) {
    const std::string a = slurp(out + "/a/" + file);
    const std::string b = slurp(out + "/b/" + file);
    CHECK(a.size() > 100);
    CHECK(a == b);
  }
}

TEST_CASE("sim::scenario: every shipped scenario's replay satisfies the timeline invariants", "[quick]")
{
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir + "/scenarios"))
    if (entry.path().extension() == ".yaml")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 5);
  for (const std::string& file : files) {
    // run_step refuses a timeline that breaks an invariant (an InternalError naming the violations).
    const ChildResult r = run_in_child([&] {
      const Scenario s     = load_scenario(file);
      const StepPlan plan  = build_step_plan(s, s.step, model_cost_source(s));
      const Schedule sched = build_schedule(plan);
      const Metrics m      = run_step(plan, sched).metrics;
      double path          = 0;
      for (const auto& [k, us] : m.critical_path_us)
        path += us;
      if (std::abs(path - m.step_time_us) > 1e-3 * m.step_time_us)
        throw InternalError("critical path " + std::to_string(path) + " != step " + std::to_string(m.step_time_us));
      return std::string();
    });
    INFO(file << ": " << r.message);
    CHECK(r.ok());
  }
}

TEST_CASE("sim::scenario: dbosim run --compare writes and tabulates overlap off / async combine / DBO", "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string out = dir.path() + "/compare_out";
  const std::string cmd = std::string(DBOSIM_BINARY) + " run " + source_dir +
                          "/scenarios/dsv3_decode_ep32_dbo.yaml --compare --out " + out + " > " + out + ".txt";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string printed = slurp(out + ".txt");
  CHECK(printed.find("overlap_off") != std::string::npos);
  CHECK(printed.find("speedup") != std::string::npos);
  const auto summary = nlohmann::json::parse(slurp(out + "/summary.json"));
  for (const char* mode : {"overlap_off", "async_combine", "dbo"}) {
    INFO(mode);
    CHECK(summary.at("compare").at(mode).at("step_time_us").get<double>() > 0);
    CHECK(slurp(out + "/compare/" + mode + "/trace.json").size() > 100);
  }
  CHECK(summary.at("compare").at("overlap_off").at("schedule") == "serial");
  CHECK(summary.at("compare").at("async_combine").at("schedule") == "async_combine");
  // The main run is the scenario as given (DBO here): the same figure as the compare's DBO column.
  CHECK(summary.at("step_time_us") == summary.at("compare").at("dbo").at("step_time_us"));
}

TEST_CASE("sim::scenario: a bad SimGrid option is bad input (exit 2), a good one reaches the engine", "[quick]")
{
  const std::string base = std::string(DBOSIM_BINARY) + " run " + source_dir +
                           "/scenarios/dsv3_decode_ep8_serial.yaml --out sim_simgrid_out ";
  const int bad = std::system((base + "--simgrid=--cfg=no/such:1 > /dev/null 2> sim_simgrid_err.txt").c_str());
  CHECK(WEXITSTATUS(bad) == 2);
  CHECK(slurp("sim_simgrid_err.txt").find("no/such") != std::string::npos);
  const int good =
      std::system((base + "--simgrid=--log=dbo_engine.thres:verbose > /dev/null 2> sim_simgrid_log.txt").c_str());
  CHECK(WEXITSTATUS(good) == 0);
  CHECK(slurp("sim_simgrid_log.txt").find("compute stream: A0 layer 0") != std::string::npos);
}

/* dbosim tests — models/All2AllTable.hpp: every all-to-all backend's row is complete, and each trait of each row drives
 * the behaviour it names (the step plan's SMs and recv hooks, the experts' layout, the scenario rules, the kernels of
 * D and C, the vLLM launch). A new row is checked by these loops without a line of its own here. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/ScenarioLoader.hpp"
#include "models/All2AllModel.hpp"
#include "models/All2AllTable.hpp"
#include "models/CommOps.hpp"
#include "models/FfnOps.hpp"
#include "plan/LaunchCommand.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

using namespace dbosim;
using models::All2AllTraits;
using models::OpKind;

namespace {

// One row of traits per backend of the enum (a yes/no trait left out of a row does not compile: All2AllFlag).
#define DBOSIM_ALL2ALL_COUNT_ROW(name, model) +1
constexpr int rows = 0 DBOSIM_ALL2ALL_BACKENDS(DBOSIM_ALL2ALL_COUNT_ROW);
#undef DBOSIM_ALL2ALL_COUNT_ROW
static_assert(rows == int(std::size(models::all2all_traits)));
static_assert(models::all2all_table_is_complete());

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// Synthetic layer costs (linear in tokens), as tests/sim_step_plan_test.cpp uses.
sim::CostSource linear_costs(int sm_count)
{
  return sim::CostSource{
      [](const models::StepShape& shape, bool moe, int) {
        models::LayerCosts lc;
        lc.moe  = moe;
        auto op = [&](OpKind k, double per_token_us) {
          models::OpCost c;
          c.kind        = k;
          c.duration_us = 5 + per_token_us * shape.tokens;
          c.recv_us     = k == OpKind::D || k == OpKind::C ? 0.25 * c.duration_us : 0;
          c.kernels     = 2;
          lc.ops.push_back(c);
        };
        op(OpKind::A0, 0.05);
        op(OpKind::A1, 0.1);
        if (moe)
          op(OpKind::D, 0.2);
        op(OpKind::MLP, 0.1);
        if (moe) {
          op(OpKind::S, 0.03);
          op(OpKind::C, 0.3);
        }
        return lc;
      },
      [sm_count](const models::OpCost& c, int sms) { return c.duration_us * sm_count / sms; },
      {},
      {},
  };
}

/** An EP8 decode step split by DBO, with 20 comm SMs asked for. */
Scenario dbo_step(models::All2AllBackend b)
{
  Scenario s;
  s.file                      = "test.yaml";
  s.model.name                = "toy";
  s.model.num_layers          = 4;
  s.model.first_k_dense       = 1;
  s.hw.name                   = "toy-gpu";
  s.hw.sm_count               = 132;
  s.hw.launch_cpu_us          = 4;
  s.hw.event_us               = 1;
  s.hw.stream_sync_us         = 10;
  s.hw.graph_replay_kernel_us = 0.5;
  s.step.phase                = models::Phase::decode;
  s.step.tokens               = 64;
  s.step.batch                = 64;
  s.step.context_len          = 4096;
  s.overlap.enable_dbo        = true;
  s.overlap.dbo_comm_sms      = 20;
  s.parallel.dp = s.parallel.ep = 8;
  s.parallel.backend            = b;
  s.execution.cuda_graph        = CudaGraphMode::full;
  return s;
}

/** A profile of the platform `t` runs on: h200 (CUDA) or mi300x (ROCm). */
std::string profile_for(const All2AllTraits& t)
{
  return t.platform.only == models::Platform::rocm ? "mi300x" : "h200";
}

/** A valid EP8 decode scenario file with `backend` and the overlap keys `overlap`, on a profile it runs on. */
std::string scenario_yaml(const std::string& backend, const std::string& overlap)
{
  std::string hw = "h200";
  for (const All2AllTraits& t : models::all2all_traits)
    if (backend == t.name)
      hw = profile_for(t);
  return "model: deepseek-v3\nhardware: " + hw +
         "\ncluster: {nodes: 1, gpus_per_node: 8}\nparallel: {dp: 8, ep: 8, tp: 1}\n"
         "workload: {phase: decode, tokens_per_rank: 128}\noverlap: {all2all_backend: " +
         backend + ", " + overlap + "}\n";
}

/** The message of loading `yaml`; "" when it loads. */
std::string load_error(const std::string& yaml)
{
  test::TempDir dir;
  try {
    load_scenario(dir.write("case.yaml", yaml));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("models::All2AllTable: every row is named once, in the enum's order, and bound to its cost model", "[quick]")
{
  std::set<std::string> names;
  REQUIRE(models::all2all_registry().size() == std::size(models::all2all_traits));
  for (const All2AllTraits& t : models::all2all_traits) {
    CHECK(names.insert(t.name).second);
    CHECK(models::backend_name(t.backend) == t.name);
    CHECK(&models::all2all_traits_of(t.backend) == &t);
    const models::All2AllEntry& e = models::all2all_model(t.backend);
    CHECK(std::string(e.name) == t.name);
    CHECK(std::string(e.doc) == t.doc);
    CHECK(e.fn != nullptr);
  }
}

TEST_CASE("models::All2AllTable: each row's SM and recv-hook traits drive the step plan under DBO", "[quick]")
{
  for (const All2AllTraits& t : models::all2all_traits) {
    INFO(t.name);
    const sim::StepPlan p = sim::build_step_plan(dbo_step(t.backend), dbo_step(t.backend).step, linear_costs(132));
    REQUIRE(p.num_ubatches() == 2);
    CHECK(p.gpu.comm_uses_sms == t.holds_sms);
    CHECK(p.gpu.comm_sms == (t.honours_dbo_comm_sms ? 20 : 0));
    CHECK(p.gpu.comm_needs_whole_sms == t.whole_sm_ctas);
    for (const sim::UbatchCosts& u : p.ubatches) {
      CHECK((u.find(true, OpKind::D_recv) != nullptr) == t.has_recv_hook);
      CHECK((u.find(true, OpKind::C_recv) != nullptr) == t.has_recv_hook);
    }
  }
}

TEST_CASE("models::All2AllTable: each row's launches and layout drive the D, C and expert kernels", "[quick]")
{
  const models::ModelSpec m = load_model_zoo("deepseek-v3");
  models::StepShape s;
  s.tokens = s.batch = 64;
  s.context_len      = 4096;
  for (const All2AllTraits& t : models::all2all_traits) {
    INFO(t.name);
    const models::HwProfile hw   = load_hw_profile(profile_for(t));
    const models::NetworkFacts n = load_network_facts(profile_for(t));
    models::CommSetup comm;
    comm.net = &n;
    models::ParallelSpec par;
    par.dp = par.ep = 8;
    par.backend     = t.backend;
    for (const auto& [kind, l] : {std::pair{OpKind::D, t.dispatch}, std::pair{OpKind::C, t.combine}}) {
      const models::OpCost c = models::all_to_all_cost(kind, m, hw, par, s, comm);
      CHECK(c.kernels == l.count);
      CHECK(contains(c.method, std::string("kernels: ") + l.what + " (" + l.source + ")"));
      CHECK(contains(c.method, t.name));
    }
    const auto experts = models::routed_mlp_kernels(m, par, s);
    const bool permute = std::any_of(experts.begin(), experts.end(),
                                     [](const models::KernelWork& k) { return k.name == "experts_permute"; });
    CHECK(permute == !t.masked_expert_input);
  }
}

TEST_CASE("models::All2AllTable: each row's DBO and async-combine traits drive the scenario rules", "[quick]")
{
  for (const All2AllTraits& t : models::all2all_traits) {
    INFO(t.name);
    const std::string dbo = load_error(scenario_yaml(t.name, "enable_dbo: true"));
    CHECK(dbo.empty() == t.dbo);
    if (!t.dbo)
      CHECK(contains(dbo, "DBO needs a DeepEP all-to-all backend"));
    const std::string async = load_error(scenario_yaml(t.name, "enable_dbo: false, async_combine: true"));
    CHECK(async.empty() == t.async_combine);
    if (!t.async_combine)
      CHECK(contains(async, "async_combine needs a DeepEP backend"));
  }
  CHECK(contains(load_error(scenario_yaml("pplx", "enable_dbo: false")),
                 "(valid: " + models::all2all_names() + ")")); // the reader's list is the table's
}

TEST_CASE("models::All2AllTable: each row's vLLM name and micro-batching trait drive the launch command", "[quick]")
{
  for (const All2AllTraits& t : models::all2all_traits) {
    INFO(t.name);
    test::TempDir dir;
    Scenario s             = load_scenario(dir.write("case.yaml", scenario_yaml(t.name, "enable_dbo: false")));
    s.overlap.enable_dbo   = true; // past the loader's rule, to see the launch's own note
    const auto l           = plan::launch_command(s);
    const std::string text = plan::format_launch(l);
    CHECK(contains(l.nodes.at(0), std::string("--all2all-backend ") + t.vllm_name));
    CHECK(contains(text, "may be refused") == !t.vllm_ubatching);
    CHECK(contains(text, "all-to-all is vLLM's") == (std::string(t.vllm_name) != t.name));
  }
}

TEST_CASE("models::All2AllTable: each row's platform drives the scenario rule", "[quick]")
{
  for (const All2AllTraits& t : models::all2all_traits) {
    INFO(t.name);
    for (const std::string hw : {"h200", "mi300x"}) {
      const std::string stack = hw == "h200" ? "cuda" : "rocm";
      std::string yaml        = scenario_yaml(t.name, "enable_dbo: false");
      yaml.replace(yaml.find("hardware: ") + 10, profile_for(t).size(), hw);
      const std::string err = load_error(yaml);
      CHECK(err.empty() == models::all2all_runs_on(t, *models::platform_named(stack)));
      if (!err.empty())
        CHECK(contains(err, std::string(t.name) + " runs on " + all2all_platform_name(t) + " only"));
    }
  }
}

TEST_CASE("models::All2AllTable: each row's quantized_dispatch trait drives the dispatch payload", "[quick]")
{
  for (const All2AllTraits& t : models::all2all_traits) {
    INFO(t.name);
    test::TempDir dir;
    const Scenario s = load_scenario(dir.write("case.yaml", scenario_yaml(t.name, "enable_dbo: false")));
    // DeepSeek-V3's zoo entry dispatches FP8: kept where the engine quantizes first, the activations' BF16 elsewhere
    CHECK(s.model.dispatch_dtype == (t.quantized_dispatch ? models::DType::fp8 : models::DType::bf16));
    const Scenario set = load_scenario(
        dir.write("set.yaml", scenario_yaml(t.name, "enable_dbo: false") + "precision: {dispatch_dtype: fp8}\n"));
    CHECK(set.model.dispatch_dtype == models::DType::fp8); // a payload the scenario names wins
  }
}

TEST_CASE("models::All2AllModel: nccl gathers every rank's tokens and scatters their sums back", "[quick]")
{
  models::ModelSpec v3           = load_model_zoo("deepseek-v3");
  v3.dispatch_dtype              = models::DType::bf16;
  const models::HwProfile hw     = load_hw_profile("h200");
  const models::NetworkFacts net = load_network_facts("h200");
  const models::All2AllContext ctx{&v3, &hw, &net, 8, 0, 1};
  const double nvl_bw = net.nvlink_achievable_bytes_per_s;
  models::RoutingSpec balanced;
  models::RoutingSpec skewed;
  skewed.dist = models::RoutingDist::zipf;
  for (const int tokens : {16, 128, 1024}) {
    INFO(tokens);
    for (const models::RoutingSpec& spec : {balanced, skewed}) {
      const auto rm = models::route_tokens(spec, models::place_experts(spec, 256, 8), 256, 8, 8, 8, tokens);
      const auto d  = models::all2all_per_rank(models::All2AllBackend::nccl, OpKind::D, rm, ctx);
      const auto c  = models::all2all_per_rank(models::All2AllBackend::nccl, OpKind::C, rm, ctx);
      // whatever the experts chose, each rank receives the 7 other ranks' tokens: the hidden row (BF16) with its
      // top-k ids and weights, then the BF16 partial sums of its own tokens from each of them
      const double row_bytes = 7168 * 2.0 + 8 * 8.0;
      for (int r = 0; r < 8; ++r) {
        CHECK(d[r].nvlink_bytes == Approx(7.0 * tokens * row_bytes));
        CHECK(d[r].duration_us == Approx(7 * hw.nvlink_latency_us + 7.0 * tokens * row_bytes / nvl_bw * 1e6));
        CHECK(c[r].nvlink_bytes == Approx(7.0 * tokens * 7168 * 2.0));
        CHECK(d[r].rdma_bytes == 0);
      }
    }
  }
  SECTION("across nodes the rail rings share each node's NICs")
  {
    const models::All2AllContext two_nodes{&v3, &hw, &net, 8, 0, 1};
    models::RoutingSpec spec;
    const auto rm = models::route_tokens(spec, models::place_experts(spec, 256, 16), 256, 8, 16, 8, 512);
    const auto d  = models::all2all_per_rank(models::All2AllBackend::nccl, OpKind::D, rm, two_nodes);
    CHECK(d[0].rdma_bytes == Approx(d[0].nvlink_bytes / 8));
    CHECK(d[0].nvlink_bytes == Approx(15.0 * 512 * (7168 * 2.0 + 64)));
    CHECK(d[0].duration_us > d[0].nvlink_bytes / nvl_bw * 1e6); // an RDMA hop per ring step, and the NIC's rate
  }
}

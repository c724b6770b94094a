/* dbosim tests — the scenario's cluster keys: defaults, a histogram file, and clear InputErrors (file, key, valid
 * values) for a bad routing name, a histogram of the wrong size, redundant experts without EPLB or not dividing
 * (checked by the scenario loader). */
#include "TempDir.hpp"
#include "config/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "sim/ClusterPlanBuilder.hpp"
#include "sim/ClusterRun.hpp"
#include "sim/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <string>

using namespace dbosim;

namespace {

std::string scenario(const std::string& cluster)
{
  return fmt::format("model: deepseek-v3\nhardware: h800\ncluster: {{{}}}\nparallel: {{dp: 16, ep: 16}}\n"
                     "workload: {{phase: decode, tokens_per_rank: 64}}\noverlap: {{enable_dbo: true}}\n",
                     cluster);
}

/** The InputError building the cluster plan of `yaml` throws (fails the test if none). */
InputError plan_error(const test::TempDir& dir, const std::string& yaml)
{
  Scenario sc = load_scenario(dir.write("s.yaml", yaml));
  try {
    sim::build_cluster_plan(sc, sim::model_cost_source(sc), sim::scenario_network_facts(sc));
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError");
  return InputError("", 0, 0, "", "");
}

} // namespace

TEST_CASE("cluster::params: defaults, a histogram file, and errors that name the key", "[quick][cluster]")
{
  test::TempDir dir;
  Scenario def = load_scenario(dir.write("d.yaml", scenario("nodes: 2")));
  CHECK(def.cluster.routing.dist == models::RoutingDist::balanced);
  CHECK(def.cluster.routing.placement == models::Placement::contiguous);
  CHECK(def.cluster.oversubscription == 1.0);

  std::string weights;
  for (int e = 0; e < 256; ++e)
    weights += fmt::format("{}{}", e ? ", " : "", e < 8 ? 50 : 1);
  dir.write("hist.yaml", fmt::format("weights: [{}]\nsource: \"test: 8 hot experts\"\n", weights));
  Scenario hist =
      load_scenario(dir.write("h.yaml", scenario("nodes: 2, routing: histogram, routing_histogram: hist.yaml")));
  REQUIRE(hist.cluster.routing.histogram.size() == 256);
  sim::ClusterPlan plan =
      sim::build_cluster_plan(hist, sim::model_cost_source(hist), sim::scenario_network_facts(hist));
  double max_rows = 0, min_rows = 1e300;
  for (const sim::RankLoad& l : plan.ranks) {
    max_rows = std::max(max_rows, l.expert_rows);
    min_rows = std::min(min_rows, l.expert_rows);
  }
  CHECK(max_rows > 4 * min_rows); // the 8 hot experts sit on rank 0 (contiguous placement)

  try {
    load_scenario(dir.write("b.yaml", scenario("nodes: 2, routing: gaussian")));
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.key() == "cluster.routing");
    CHECK(std::string(e.what()).find("balanced, uniform, zipf, histogram") != std::string::npos);
  }
  dir.write("short.yaml", "weights: [1, 2, 3]\nsource: \"test\"\n");
  CHECK(plan_error(dir, scenario("nodes: 2, routing: histogram, routing_histogram: short.yaml")).key() ==
        "cluster.routing");
  // The loader checks the placement (the edge): redundant slots only under EPLB, routed + redundant divisible by ep.
  auto load_error = [&](const std::string& yaml) {
    try {
      load_scenario(dir.write("p.yaml", yaml));
    } catch (const InputError& e) {
      return e;
    }
    FAIL("no InputError");
    return InputError("", 0, 0, "", "");
  };
  CHECK(load_error(scenario("nodes: 2, redundant_experts: 16")).key() == "cluster.placement");
  const InputError r5 = load_error(scenario("nodes: 2, placement: eplb, redundant_experts: 5"));
  CHECK(r5.key() == "cluster.redundant_experts");
  CHECK(std::string(r5.what()).find("e.g. 16") != std::string::npos);
  CHECK_THROWS_AS(load_scenario(dir.write("n.yaml", scenario("nodes: 1"))), InputError); // the loader: dp = GPUs
}

// One dispatch/combine model: with balanced routing the single-rank plan and the cluster plan give every D and C
// the same duration, for each backend, inside a node and across nodes, and with EPLB redundant slots at EP144.
TEST_CASE("cluster::params: the single-rank and the cluster plans cost D and C alike", "[quick][cluster]")
{
  test::TempDir dir;
  struct Case {
    std::string cluster, parallel, backend;
  };
  for (const Case& c :
       {Case{"nodes: 1", "dp: 8, ep: 8", "deepep_low_latency"},
        Case{"nodes: 4", "dp: 32, ep: 32", "deepep_low_latency"},
        Case{"nodes: 4", "dp: 32, ep: 32", "deepep_high_throughput"}, Case{"nodes: 2", "dp: 16, ep: 16", "nccl"},
        Case{"nodes: 18, placement: eplb, redundant_experts: 32", "dp: 144, ep: 144", "deepep_low_latency"}}) {
    const std::string yaml =
        fmt::format("model: deepseek-v3\nhardware: h800\ncluster: {{{}}}\nparallel: {{{}}}\n"
                    "workload: {{phase: decode, tokens_per_rank: 64}}\noverlap: {{all2all_backend: {}}}\n",
                    c.cluster, c.parallel, c.backend);
    Scenario sc             = load_scenario(dir.write("same.yaml", yaml));
    const sim::StepPlan one = sim::build_step_plan(sc, sim::model_cost_source(sc));
    const sim::ClusterPlan cp =
        sim::build_cluster_plan(sc, sim::model_cost_source(sc), sim::scenario_network_facts(sc));
    INFO(yaml);
    for (models::OpKind k : {models::OpKind::D, models::OpKind::C}) {
      const double single = one.ubatches[0].find(true, k)->duration_us;
      double slowest      = 0;
      for (const sim::StepPlan& p : cp.classes)
        slowest = std::max(slowest, p.ubatches[0].find(true, k)->duration_us);
      CHECK(single > 0);
      CHECK(single == Approx(slowest).epsilon(1e-12));
    }
  }
}

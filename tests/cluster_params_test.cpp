/* dbosim tests — the scenario's cluster keys: defaults, a histogram file, and clear InputErrors (file, key, valid
 * values) for a bad routing name, a histogram of the wrong size, redundant experts without EPLB or not dividing
 * (checked by the scenario loader). */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/DataDir.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/ScenarioLoader.hpp"
#include "sim/engine/ClusterRun.hpp"
#include "sim/plan/ClusterPlanBuilder.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

using namespace dbosim;

namespace {

std::string scenario(const std::string& cluster)
{
  return fmt::format("model: deepseek-v3\nhardware: h800\ncluster: {{{}}}\nparallel: {{dp: 16, ep: 16}}\n"
                     "workload: {{phase: decode, tokens_per_rank: 64}}\noverlap: {{enable_dbo: true}}\n",
                     cluster);
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
      sim::build_cluster_plan(hist, hist.step, sim::model_cost_source(hist), sim::scenario_network_facts(hist));
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
  // A histogram that does not match the model is refused by the loader, at the scenario's key, not later by the
  // routing draw.
  try {
    load_scenario(dir.write("s.yaml", scenario("nodes: 2, routing: histogram, routing_histogram: short.yaml")));
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.key() == "cluster.routing_histogram");
    CHECK(std::string(e.what()).find("routing histogram has 3 weights for 256 experts") != std::string::npos);
  }
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
    // The cluster path's default routing is balanced: the single-rank plan compared with it prices ideal load.
    const std::string yaml =
        fmt::format("model: deepseek-v3\nhardware: h800\ncluster: {{{}, expert_load: ideal}}\nparallel: {{{}}}\n"
                    "workload: {{phase: decode, tokens_per_rank: 64}}\noverlap: {{all2all_backend: {}}}\n",
                    c.cluster, c.parallel, c.backend);
    Scenario sc             = load_scenario(dir.write("same.yaml", yaml));
    const sim::StepPlan one = sim::build_step_plan(sc, sc.step, sim::model_cost_source(sc));
    const sim::ClusterPlan cp =
        sim::build_cluster_plan(sc, sc.step, sim::model_cost_source(sc), sim::scenario_network_facts(sc));
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

// hwprofiles/network/*.yaml: DeepEP's per-EP chunk table is read whole and checked (one entry per EP size in every
// column, EP ascending); the row of the largest listed EP <= ep applies.
TEST_CASE("cluster::params: the network facts' chunk table, and errors that name the key", "[quick][cluster]")
{
  const models::NetworkFacts h800 = load_network_facts("h800");
  CHECK(h800.ht_chunk_tokens(8, true, true) == 6);     // get_dispatch_config(8): NVL chunk 6
  CHECK(h800.ht_chunk_tokens(32, false, true) == 1);   // get_combine_config(32): NVL chunk 1
  CHECK(h800.ht_chunk_tokens(16, true, false) == 20);  // get_dispatch_config(16): RDMA chunk 20
  CHECK(h800.ht_chunk_tokens(256, true, false) == 12); // beyond the table: the last row (160)
  CHECK(h800.sources.count("ht_chunk_tokens") == 1);

  test::TempDir dir;
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/network/h800.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto error_key = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    try {
      load_network_facts(dir.write("net.yaml", t));
    } catch (const InputError& e) {
      return e.key();
    }
    return std::string("no error");
  };
  CHECK(error_key("combine_rdma:  [6, 6, 6,", "combine_rdma:  [6, 6,") == "ht_chunk_tokens.ep");
  CHECK(error_key("ep:            [2, 4, 8,", "ep:            [2, 8, 4,") == "ht_chunk_tokens.ep");
  CHECK(error_key("dispatch_nvl:  [24,", "dispatch_nvl:  [2.5,") == "ht_chunk_tokens.dispatch_nvl");
}

// Every shipped hwprofiles/network/*.yaml loads, each number with its source; every hardware profile has its link
// facts; a full mesh's per-GPU achievable figure is its links' sum (the loader enforces it).
TEST_CASE("cluster::params: every shipped network facts file loads with its sources and one per profile",
          "[quick][cluster]")
{
  for (const std::string& name : list_data_files("hwprofiles/network")) {
    INFO(name);
    const models::NetworkFacts f = load_network_facts(name);
    CHECK(f.name == name);
    CHECK(f.sources.count("nvlink_achievable_bandwidth") == 1);
    for (const auto& [key, src] : f.sources) {
      INFO(key);
      CHECK_FALSE(src.empty());
    }
    if (f.scale_up_topology == models::ScaleUpTopology::full_mesh) {
      CHECK(f.nvlink_achievable_bytes_per_s == Approx(f.mesh_links_per_gpu * f.mesh_link_achievable_bytes_per_s));
      CHECK(f.sources.count("scale_up.link_bandwidth") == 1);
    }
  }
  for (const std::string& hw : list_hw_profiles()) {
    INFO(hw);
    CHECK(load_network_facts(hw).name == hw);
  }
  const models::NetworkFacts mi300x = load_network_facts("mi300x"); // xGMI: 7 links of 64 GB/s, ~48 usable
  CHECK(mi300x.scale_up_topology == models::ScaleUpTopology::full_mesh);
  CHECK(mi300x.mesh_links_per_gpu == 7);
  CHECK(mi300x.mesh_link_bytes_per_s == Approx(64e9));
  CHECK(mi300x.mesh_link_achievable_bytes_per_s == Approx(48e9));
  CHECK(load_network_facts("gb300").scale_up_topology == models::ScaleUpTopology::switched);
}

TEST_CASE("cluster::params: scale_up errors name the key and list the topologies", "[quick][cluster]")
{
  test::TempDir dir;
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/network/mi300x.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto error_of = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    try {
      load_network_facts(dir.write("net.yaml", t));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string unknown = error_of("{value: full_mesh", "{value: torus");
  CHECK(unknown.find("scale_up.topology.value") != std::string::npos);
  CHECK(unknown.find("switch, full_mesh") != std::string::npos);
  CHECK(error_of("\"336GBps\"", "\"448GBps\"").find("links_per_gpu x link_achievable_bandwidth") != std::string::npos);
  CHECK(error_of("{value: \"48GBps\"", "{value: \"70GBps\"").find("exceeds the link's raw rate") != std::string::npos);
}

/* dbosim tests — the cluster summary and trace: the exact symmetry shortcut (balanced routing: one rank class), the
 * per-rank spread and straggler, one trace process per rank; byte-identical outputs for equal inputs. No SimGrid:
 * the max-plus replay (exact when no resource is shared inside a rank; tested equal to SimGrid elsewhere). */
#include "config/ScenarioLoader.hpp"
#include "sim/engine/ClusterRun.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

Scenario ep16(models::RoutingDist dist)
{
  Scenario sc    = load_scenario(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_decode_ep32_zipf_eplb.yaml");
  sc.parallel.ep = sc.parallel.dp      = 16;
  sc.cluster.nodes                     = 2;
  sc.cluster.routing.dist              = dist;
  sc.cluster.routing.placement         = models::Placement::contiguous;
  sc.cluster.routing.redundant_experts = 0;
  return sc;
}

} // namespace

TEST_CASE("cluster::summary: balanced routing is one rank class, per-rank spread, straggler and a trace process per "
          "rank",
          "[quick][cluster]")
{
  const ClusterRun sym = run_cluster(ep16(models::RoutingDist::balanced));
  REQUIRE_FALSE(sym.simgrid); // low-latency kernels hold no SMs: the exact replay
  CHECK(sym.metrics.classes == 1);
  CHECK(sym.metrics.rank_step_us.min == sym.metrics.rank_step_us.max);
  CHECK(sym.metrics.expert_rows.min == Approx(64 * 8 * 2)); // 64 tokens per micro-batch x top-8, both micro-batches

  const ClusterRun drawn = run_cluster(ep16(models::RoutingDist::uniform));
  CHECK(drawn.metrics.classes == 16);
  CHECK(drawn.metrics.expert_rows.max > drawn.metrics.expert_rows.min);
  const RankLoad& s = drawn.plan.ranks.at(drawn.metrics.straggler);
  for (const RankLoad& l : drawn.plan.ranks)
    CHECK(l.own_work_us <= s.own_work_us);
  CHECK(drawn.metrics.step_time_us >= sym.metrics.step_time_us * 0.95);

  const nlohmann::ordered_json j = cluster_summary_json(drawn.plan, drawn.metrics);
  CHECK(j["ep"] == 16);
  CHECK(j["straggler"]["rank"] == drawn.metrics.straggler);
  CHECK(j["expert_rows"]["max"].get<double>() == drawn.metrics.expert_rows.max);

  // The step figures a single-rank run gives, of one rank whose step is the cluster's: the straggler here.
  const RankStep rep = representative_step(drawn);
  CHECK(rep.rank == drawn.metrics.straggler);
  CHECK(j["representative"]["rank"] == rep.rank);
  CHECK(rep.metrics.step_time_us == drawn.metrics.step_time_us);
  double path = 0;
  for (const auto& [k, us] : rep.metrics.critical_path_us)
    path += us;
  CHECK(path == Approx(drawn.metrics.step_time_us).margin(1e-3));
  CHECK(rep.metrics.exposed_comm_us + rep.metrics.overlap_us == Approx(rep.metrics.comm_us).margin(1e-6));

  const nlohmann::json trace = cluster_trace(drawn.sched, drawn.plan, drawn.timeline);
  std::set<int> pids;
  int names = 0;
  for (const auto& e : trace["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    names += e["ph"] == "M" && e["name"] == "process_name";
  }
  CHECK(pids.size() == 16);
  CHECK(names == 16);

  // Same inputs, same bytes.
  const ClusterRun again = run_cluster(ep16(models::RoutingDist::uniform));
  CHECK(cluster_summary_json(again.plan, again.metrics).dump() == j.dump());
  CHECK(cluster_trace(again.sched, again.plan, again.timeline).dump() == trace.dump());
}

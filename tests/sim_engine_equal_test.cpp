/* The two engines agree: the max-plus replay (sim/engine/StepEngine's replay) gives SimGrid's op records wherever it is
 * exact — every shipped scenario under every schedule it can run, one rank and every rank, and randomized plans — and
 * the engine choice refuses or falls back where it is not. SimGrid runs in forked children (one per process). */
#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"
#include "sim/engine/ClusterRun.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/engine/TimelineEngine.hpp"
#include "sim/output/TimelineBytes.hpp"
#include "sim/plan/StepPlanBuilder.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace dbosim;
using namespace dbosim::sim;
namespace fs = std::filesystem;

namespace {

/** SimGrid's own precision: its clock is rounded to surf/precision (1e-9 s) at each event and its sharing solved to
 *  a relative precision, the replay's sums are exact doubles. One-rank steps agree to ~1e-9 us; every-rank steps,
 *  with thousands of events, to a few ns (1.6e-3 us on the EP1024 step, 1.2e-3 us at 40 ms on the EP32 zipf one). */
double simgrid_precision_us(double t_us) { return 2e-3 + 1e-7 * std::abs(t_us); }

/** Every record of `a` and `b` equal to SimGrid's precision. Returns the mismatches. */
int compare_records(const Timeline& a, const Timeline& b, const std::string& what)
{
  int bad = 0;
  if (a.ops.size() != b.ops.size()) {
    FAIL_CHECK(what << ": " << a.ops.size() << " vs " << b.ops.size() << " ops");
    return 1;
  }
  if (std::abs(a.step_time() - b.step_time()) > simgrid_precision_us(b.step_time())) {
    FAIL_CHECK(what << ": step " << a.step_time() << " vs " << b.step_time());
    ++bad;
  }
  for (std::size_t v = 0; v < a.ops.size() && bad < 3; ++v) {
    const OpRecord &x = a.ops[v], &y = b.ops[v];
    for (auto [p, q, name] : {std::tuple{x.host_begin_us, y.host_begin_us, "host_begin"},
                              std::tuple{x.issue_us, y.issue_us, "issue"}, std::tuple{x.start_us, y.start_us, "start"},
                              std::tuple{x.end_us, y.end_us, "end"}, std::tuple{x.arrive_us, y.arrive_us, "arrive"}})
      if (std::abs(p - q) > simgrid_precision_us(q)) {
        FAIL_CHECK(what << ": op " << v << " " << name << " " << p << " vs " << q << " (" << p - q << ")");
        ++bad;
      }
  }
  return bad;
}

Timeline simgrid_child(const StepPlan& plan, const Schedule& sched)
{
  const ChildResult r = run_in_child([&] { return timeline_bytes(TimelineEngine(sched, plan).run(1)); });
  INFO(r.message);
  REQUIRE(r.ok());
  return timeline_from_bytes(r.payload);
}

} // namespace

TEST_CASE("sim::engines: the replay equals SimGrid on every shipped scenario and schedule where it is exact", "[slow]")
{
  int exact = 0, inexact = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(std::string(DBOSIM_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".yaml")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 10);
  for (const fs::path& f : files) {
    const Scenario s = load_scenario(f.string());
    if (s.cluster.routing.dist != models::RoutingDist::balanced) { // every rank: the cluster engines
      const ChildResult r =
          run_in_child([&] { return cluster_timeline_bytes(run_cluster(s, {}, 1, {}, EngineKind::simgrid).timeline); });
      REQUIRE(r.ok());
      const ClusterTimeline ref = cluster_timeline_from_bytes(r.payload);
      const ClusterRun fast     = run_cluster(s, {}, 1, {}, EngineKind::automatic);
      if (fast.simgrid) {
        ++inexact;
        continue;
      }
      ++exact;
      REQUIRE(fast.timeline.classes.size() == ref.classes.size());
      for (std::size_t c = 0; c < ref.classes.size(); ++c)
        compare_records(fast.timeline.classes[c], ref.classes[c], fmt::format("{} class {}", f.filename().string(), c));
      continue;
    }
    for (const ScheduleEntry& e : schedule_registry()) {
      PlanOptions popt;
      popt.schedule = e.name;
      StepPlan plan;
      try {
        plan = build_step_plan(s, s.step, model_cost_source(s), popt);
      } catch (const InputError&) {
        continue; // a schedule this step cannot run (its micro-batches)
      }
      const Schedule sched = build_schedule(plan);
      if (!replay_inexact_reason(plan).empty()) {
        ++inexact;
        CHECK_THROWS_AS(run_step(plan, sched, {{}, EngineKind::replay}), InputError);
        continue;
      }
      ++exact;
      const std::string what = fmt::format("{} --schedule {}", f.filename().string(), e.name);
      INFO(what);
      compare_records(replay_timeline(plan, sched), simgrid_child(plan, sched), what);
      const StepRun fast = run_step(plan, sched, {{}, EngineKind::automatic});
      CHECK(fast.engine == EngineKind::replay);
    }
  }
  INFO(exact << " exact, " << inexact << " not");
  CHECK(exact >= 25);  // 30 when written: every low-latency, serial and async step
  CHECK(inexact >= 5); // 21: DeepEP high-throughput and NCCL hold SMs; the ROCm host sync
}

TEST_CASE("sim::engines: the replay equals SimGrid on randomized plans", "[quick]")
{
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> us(0.5, 400.0);
  std::uniform_int_distribution<int> layers(1, 6), kernels(1, 12);
  std::bernoulli_distribution coin(0.5);
  const std::size_t rows = std::size(schedule_traits); // every schedule of the table, in turn
  for (int trial = 0; trial < 40; ++trial) {
    const ScheduleTraits& t = schedule_traits[static_cast<std::size_t>(trial) % rows];
    const int ub            = t.num_ubatches;
    LayerDurations d;
    d.a0_us = us(rng), d.a1_us = us(rng), d.d_us = us(rng), d.mlp_us = us(rng), d.c_us = us(rng);
    d.s_us                  = coin(rng) ? us(rng) : -1;
    d.dense_mlp_us          = us(rng);
    d.kernels_per_op        = kernels(rng);
    const int n             = layers(rng);
    StepPlan plan           = synthetic_plan(t.id, n + 1, coin(rng) ? 1 : 0, ub, d);
    plan.host.launch_cpu_us = coin(rng) ? us(rng) / 20 : 0; // a host that is sometimes the bottleneck
    plan.host.event_us      = us(rng) / 100;
    plan.host.handoff_us    = us(rng) / 100;
    plan.host.cuda_graph    = coin(rng);
    if (plan.host.cuda_graph)
      plan.host.graph_launch_us = us(rng) / 10;
    const Schedule sched = build_schedule(plan);
    REQUIRE(replay_inexact_reason(plan).empty());
    compare_records(replay_timeline(plan, sched), simgrid_child(plan, sched),
                    fmt::format("trial {} ({}, {} layers)", trial, t.name, n + 1));
  }
}

TEST_CASE("sim::engines: replay is refused where a comm kernel holds SMs, auto falls back to SimGrid there", "[quick]")
{
  LayerDurations d;
  d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 15, d.c_us = 25;
  StepPlan plan          = synthetic_plan(ScheduleId::dbo, 3, 0, 2, d);
  plan.gpu.comm_uses_sms = true;
  plan.gpu.comm_sms      = 0;
  const Schedule sched   = build_schedule(plan);
  REQUIRE(!replay_inexact_reason(plan).empty());
  try {
    run_step(plan, sched, {{}, EngineKind::replay});
    FAIL("the replay ran where it is not exact");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("--engine") != std::string::npos);
    CHECK(std::string(e.what()).find("hold SMs") != std::string::npos);
  }
  const StepRun fallback = run_step(plan, sched, {{}, EngineKind::automatic}); // in a child: this process stays free
  CHECK(fallback.engine == EngineKind::simgrid);
  compare_records(fallback.timeline, simgrid_child(plan, sched), "auto vs SimGrid");
  const StepRun again = run_step(plan, sched, {{}, EngineKind::automatic}); // any number of times per process
  CHECK(again.timeline.step_time() == fallback.timeline.step_time());
}

TEST_CASE("sim::engines: parse_engine and engine_name are inverse over the three names", "[quick]")
{
  for (EngineKind e : {EngineKind::simgrid, EngineKind::replay, EngineKind::automatic})
    CHECK(parse_engine(engine_name(e)) == e);
  CHECK(!parse_engine("maxplus"));
  CHECK(engine_names() == "simgrid|replay|auto");
}

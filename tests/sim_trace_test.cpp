/* The Chrome trace and summary.json of a small DBO step: tracks, op names and args, flow arrows, SM counter. */
#include "sim/engine/TimelineEngine.hpp"
#include "sim/output/Metrics.hpp"
#include "sim/output/Summary.hpp"
#include "sim/output/TraceWriter.hpp"
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/OpGraph.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace dbosim::sim;
using nlohmann::json;

TEST_CASE("sim::TraceWriter: tracks, ops with layer and micro-batch, flows, SM partition counter", "[quick]")
{
  LayerDurations d;
  d.a0_us = 10, d.a1_us = 20, d.d_us = 30, d.mlp_us = 40, d.s_us = 15, d.c_us = 25, d.dense_mlp_us = 35;
  StepPlan plan           = synthetic_plan(ScheduleId::dbo, 3, 1, 2, d);
  plan.host.launch_cpu_us = 2;
  plan.gpu.comm_sms       = 20;
  plan.gpu.comm_uses_sms  = true;
  const Schedule sched    = build_schedule(plan);
  TimelineEngine engine(sched, plan);
  const Timeline tl = engine.run();
  const json trace  = chrome_trace(sched, plan, tl);

  std::set<std::string> thread_names;
  std::set<std::string> op_names;
  int ops = 0, host_slices = 0, flow_starts = 0, flow_ends = 0, counters = 0;
  for (const json& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "thread_name")
      thread_names.insert(e.at("args").at("name").get<std::string>());
    if (ph == "X" && e.at("cat") != "host_launch" && e.at("cat") != "host_sync") {
      ++ops;
      op_names.insert(e.at("name").get<std::string>());
      CHECK(e.at("args").contains("layer"));
      CHECK(e.at("args").contains("ubatch"));
      CHECK(e.at("dur").get<double>() >= 0);
    }
    host_slices += ph == "X" && e.at("cat") == "host_launch";
    flow_starts += ph == "s";
    flow_ends += ph == "f";
    counters += ph == "C" && e.at("name") == "SM partition";
  }
  CHECK(thread_names ==
        std::set<std::string>{"compute stream", "comm stream", "host thread ubatch 0", "host thread ubatch 1"});
  CHECK(op_names == std::set<std::string>{"A0", "A1", "D", "MLP", "S", "C"});
  CHECK(ops == static_cast<int>(sched.num_ops()));
  CHECK(host_slices == static_cast<int>(sched.num_ops())); // every op pays at least its launch
  int cross = 0;
  for (auto [e, end] = boost::edges(sched.graph->dag); e != end; ++e)
    cross += sched.graph->dag[*e].kind == EdgeKind::data && sched.ops[boost::source(*e, sched.graph->dag)].stream !=
                                                                sched.ops[boost::target(*e, sched.graph->dag)].stream;
  CHECK(cross > 0);
  CHECK(flow_starts == cross);
  CHECK(flow_ends == cross);
  CHECK(counters == 1 + 2 * 8); // initial value, then on/off around each of the 8 collectives (2 MoE layers x 2 x 2)

  const auto summary = summary_json(plan, compute_metrics(sched, tl));
  for (const char* key :
       {"step_time_us", "per_layer_us", "exposed_comm_us", "overlap_us", "stream_busy_pct", "critical_path", "per_op"})
    CHECK(summary.contains(key));
  CHECK(summary.at("per_layer_us").size() == 3);
  CHECK(summary.at("per_op").at("D").at("count") == 4);
}

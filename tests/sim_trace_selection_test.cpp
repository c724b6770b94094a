/* dbosim tests — which ranks a cluster trace draws (`dbosim run --trace`): the option's parser and its errors, `auto`
 * keeping every rank of a small cluster and only the slowest / median / fastest ranks (plus the collectives' landing
 * track) of a large one, `ranks=` keeping exactly those, `none` writing no file (and removing an earlier run's).
 * No SimGrid: the exact max-plus replay, and the CLI in child processes. */
#include "RunShell.hpp"
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "sim/engine/ClusterRun.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>
#include <sstream>
#include <string>

using namespace dbosim;
using namespace dbosim::sim;

namespace {

/** 16 ranks of the shipped EP32 Zipf scenario: every rank differs. */
Scenario ep16()
{
  Scenario sc    = load_scenario(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_decode_ep32_zipf_eplb.yaml");
  sc.parallel.ep = sc.parallel.dp      = 16;
  sc.cluster.nodes                     = 2;
  sc.cluster.routing.placement         = models::Placement::contiguous;
  sc.cluster.routing.redundant_experts = 0;
  return sc;
}

nlohmann::json traced(const ClusterRun& run, const TracedRanks& t)
{
  std::ostringstream text;
  write_cluster_trace(text, run.sched, run.plan, run.timeline, t);
  return nlohmann::json::parse(text.str());
}

std::set<int> pids(const nlohmann::json& trace)
{
  std::set<int> out;
  for (const auto& e : trace.at("traceEvents"))
    out.insert(e.at("pid").get<int>());
  return out;
}

int comm_ops(const Schedule& sched)
{
  int n = 0;
  for (OpVertex v = 0; v < sched.num_ops(); ++v)
    n += is_comm_kind(sched.ops[v].kind);
  return n;
}

std::string input_error(const std::string& text, int ep)
{
  try {
    parse_trace_selection(text, ep);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("sim::TraceSelection: --trace values, and bad ones named with the valid range", "[quick]")
{
  CHECK(parse_trace_selection("", 16).mode == TraceMode::automatic);
  CHECK(parse_trace_selection("auto", 16).mode == TraceMode::automatic);
  CHECK(parse_trace_selection("all", 16).mode == TraceMode::all);
  CHECK(parse_trace_selection("none", 16).mode == TraceMode::none);
  const TraceSelection r = parse_trace_selection("ranks=9,0,9,15", 16);
  CHECK(r.mode == TraceMode::ranks);
  CHECK(r.ranks == std::vector<int>{0, 9, 15});
  CHECK(trace_selection_name(r) == "ranks=0,9,15");
  for (const char* bad : {"every", "ranks", "ranks=", "ranks=1,,2", "ranks=-1", "ranks=16", "ranks=1,x", "ranks=1,",
                          "ranks= 1", "ranks=99999999999", "ALL"}) {
    INFO(bad);
    const std::string e = input_error(bad, 16);
    CHECK(e.rfind("--trace: ", 0) == 0);
    CHECK(e.find("(valid: auto, all, none, or ranks=LIST: comma-separated ranks in 0..15)") != std::string::npos);
  }
  CHECK(input_error("ranks=16", 16).find("rank 16 is outside the EP group of 16 ranks") != std::string::npos);
  CHECK(input_error("ranks=1023", 1024) == "no error");
}

TEST_CASE("sim::ClusterTrace: auto draws every rank of a cluster up to the threshold", "[quick][cluster]")
{
  const ClusterRun run = run_cluster(ep16());
  REQUIRE(run.plan.ep == 16);
  REQUIRE(16 <= trace_all_ranks_max);
  const TracedRanks t = pick_trace_ranks(TraceSelection{}, run.plan, run.metrics);
  CHECK(t.every_rank());
  CHECK_FALSE(t.landings);
  const nlohmann::json trace = traced(run, t);
  std::set<int> every;
  for (int r = 0; r < 16; ++r)
    every.insert(r);
  CHECK(pids(trace) == every); // no landing track
  CHECK(trace.at("otherData").at("trace") == "all 16 ranks");
  CHECK(trace.at("otherData").at("trace_mode") == "auto");
  CHECK(trace.at("otherData").at("straggler_rank") == run.metrics.straggler); // the plan report's timeline rank
  // The same events as cluster_trace (every rank, the tests' JSON form).
  CHECK(trace.at("traceEvents") == cluster_trace(run.sched, run.plan, run.timeline).at("traceEvents"));
}

TEST_CASE("sim::ClusterTrace: auto above the threshold draws the slowest, median and fastest ranks and the landings",
          "[quick][cluster]")
{
  const ClusterRun run = run_cluster(ep16());
  const TracedRanks t  = pick_trace_ranks(TraceSelection{}, run.plan, run.metrics, /*all_ranks_max=*/8);

  // The roles by own work (MLP + D + C alone), worked out here independently of the picker.
  std::vector<double> work;
  for (const RankLoad& l : run.plan.ranks)
    work.push_back(l.own_work_us);
  const int slowest = static_cast<int>(std::max_element(work.begin(), work.end()) - work.begin()); // first max
  const int fastest = static_cast<int>(std::min_element(work.begin(), work.end()) - work.begin()); // first min
  std::vector<int> order(16);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return work[a] < work[b]; });
  const int median = order[7];
  REQUIRE(std::set<int>{slowest, median, fastest}.size() == 3); // distinct ranks: the check below means something
  CHECK(t.slowest == slowest);
  CHECK(t.slowest == run.metrics.straggler);
  CHECK(t.fastest == fastest);
  CHECK(t.median == median);
  std::set<int> expected{slowest, median, fastest};
  if (t.representative >= 0)
    expected.insert(t.representative);
  else
    CHECK(expected.count(run.metrics.representative) == 1); // summary.json's rank is always drawn
  CHECK(std::set<int>(t.ranks.begin(), t.ranks.end()) == expected);
  CHECK(t.landings);

  const nlohmann::json trace  = traced(run, t);
  std::set<int> with_landings = expected;
  with_landings.insert(16); // the landing track: pid = ep
  CHECK(pids(trace) == with_landings);
  CHECK(trace.at("otherData").at("trace_ranks").get<std::vector<int>>() == t.ranks);
  const std::string line = trace.at("otherData").at("trace").get<std::string>();
  CHECK(line.find(std::to_string(expected.size()) + " of 16 ranks (slowest " + std::to_string(slowest) + ", median " +
                  std::to_string(median) + ", fastest " + std::to_string(fastest)) == 0);
  CHECK(line.find("+ collective landings; --trace all for every rank") != std::string::npos);

  // One landing per D and C collective, where the last rank's data is in: no drawn rank's collective ends later.
  int landings = 0;
  double last  = 0;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("pid") == 16 && e.at("ph") == "i") {
      ++landings;
      last = std::max(last, e.at("ts").get<double>());
    }
  CHECK(landings == comm_ops(run.sched));
  double latest_done = 0;
  for (int r : t.ranks) {
    const Timeline& tl = run.timeline.classes.at(run.plan.ranks.at(r).rank_class);
    for (OpVertex v = 0; v < run.sched.num_ops(); ++v)
      if (is_comm_kind(run.sched.ops[v].kind))
        latest_done = std::max(latest_done, tl.ops[v].done_us());
  }
  CHECK(last == Approx(latest_done).margin(1e-3));
}

TEST_CASE("sim::ClusterTrace: auto on a cluster above 64 ranks keeps three or four of them", "[quick][cluster]")
{
  const ClusterRun run =
      run_cluster(load_scenario(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_decode_ep144_h800_eplb.yaml"));
  REQUIRE(run.plan.ep == 144);
  const TracedRanks t = pick_trace_ranks(TraceSelection{}, run.plan, run.metrics);
  CHECK(t.ranks.size() >= 3);
  CHECK(t.ranks.size() <= 4);
  CHECK(t.landings);
  CHECK(std::find(t.ranks.begin(), t.ranks.end(), run.metrics.straggler) != t.ranks.end());
}

TEST_CASE("sim::ClusterTrace: ranks= draws exactly those ranks, plus the landings", "[quick][cluster]")
{
  const ClusterRun run = run_cluster(ep16());
  const TracedRanks t  = pick_trace_ranks(parse_trace_selection("ranks=11,2", 16), run.plan, run.metrics);
  CHECK(t.ranks == std::vector<int>{2, 11});
  const nlohmann::json trace = traced(run, t);
  CHECK(pids(trace) == std::set<int>{2, 11, 16});
  CHECK(trace.at("otherData").at("trace_mode") == "ranks=2,11");
  // The straggler is named only when it is drawn.
  CHECK(trace.at("otherData").contains("straggler_rank") ==
        (run.metrics.straggler == 2 || run.metrics.straggler == 11));
  int names = 0;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name" && e.at("pid") != 16) {
      ++names;
      const int r = e.at("pid").get<int>();
      CHECK(e.at("args").at("name") ==
            "rank " + std::to_string(r) + " (class " + std::to_string(run.plan.ranks.at(r).rank_class) + ")");
    }
  CHECK(names == 2);
  // Every rank listed: the whole cluster, no landing track.
  std::string all = "ranks=0";
  for (int r = 1; r < 16; ++r) { // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "," + to_string
    all += ',';
    all += std::to_string(r);
  }
  CHECK(pick_trace_ranks(parse_trace_selection(all, 16), run.plan, run.metrics).every_rank());
}

TEST_CASE("cli: run --trace none writes no trace.json, a bad --trace exits 2 naming the option", "[quick]")
{
  namespace fs = std::filesystem;
  dbosim::test::TempDir dir;
  int rc                 = 0;
  const std::string bin  = DBOSIM_BINARY;
  const std::string one  = std::string(DBOSIM_SOURCE_DIR) + "/scenarios/default.yaml"; // a single-rank run
  const std::string out1 = dir.path() + "/one";
  std::string text       = dbosim::test::run_shell(bin + " run " + one + " --trace none --out " + out1 + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(fs::exists(out1 + "/summary.json"));
  CHECK_FALSE(fs::exists(out1 + "/trace.json"));
  CHECK(text.find("trace: none (--trace none)") != std::string::npos);
  text = dbosim::test::run_shell(bin + " run " + one + " --trace ranks=3 --out " + out1 + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(fs::exists(out1 + "/trace.json")); // one rank: every mode but none draws it, as before
  text = dbosim::test::run_shell(bin + " run " + one + " --trace none --out " + out1 + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK_FALSE(fs::exists(out1 + "/trace.json")); // the earlier run's trace does not pass for this one's

  // A cluster run (every rank drawn).
  const std::string cluster = std::string(DBOSIM_SOURCE_DIR) + "/scenarios/dsv3_decode_ep32_zipf_eplb.yaml";
  const std::string out2    = dir.path() + "/cluster";
  text = dbosim::test::run_shell(bin + " run " + cluster + " --trace none --out " + out2 + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(fs::exists(out2 + "/summary.json"));
  CHECK_FALSE(fs::exists(out2 + "/trace.json"));
  CHECK(text.find("trace: none (--trace none)") != std::string::npos);
  text = dbosim::test::run_shell(bin + " run " + cluster + " --out " + out2 + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(fs::exists(out2 + "/trace.json"));
  text = dbosim::test::run_shell(bin + " run " + cluster + " --trace none --out " + out2 + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK_FALSE(fs::exists(out2 + "/trace.json"));

  text = dbosim::test::run_shell(bin + " run " + one + " --trace ranks=8 --out " + out1 + " 2>&1", &rc);
  CHECK(rc == 2); // default.yaml: EP 8
  CHECK(text.find("--trace: rank 8 is outside the EP group of 8 ranks") != std::string::npos);
  CHECK(text.find("ranks in 0..7") != std::string::npos);
}

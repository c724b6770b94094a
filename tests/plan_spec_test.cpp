/* dbosim tests — plan files: the shipped plans load, points are the sweep's cartesian product less the points their
 * engine cannot be launched to run, and a bad plan gets a located error naming the plan file (never the scratch copy
 * the scenario loader reads). */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "plan/LaunchCommand.hpp"
#include "plan/PlanPoints.hpp"
#include "plan/PlanSpec.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

using dbosim::InputError;
using dbosim::test::TempDir;
using namespace dbosim::plan;

namespace {
const std::string kPlan = R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 16, max_concurrency: 16}
overlap: {enable_dbo: false, all2all_backend: deepep_low_latency}
sweep:
  "parallel.ep,parallel.dp,cluster.nodes": [[8, 8, 1], [16, 16, 2]]
  overlap.enable_dbo: [false, true]
  hardware: [h200, b200]
plan:
  demand: {output_tokens_per_s: 1000}
  slo: {p99_itl_ms: 50}
)";

std::string replace(std::string text, const std::string& from, const std::string& to)
{
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

std::string error_of(const std::string& yaml, std::string* path_out = nullptr)
{
  TempDir dir;
  const std::string path = dir.write("plan.yaml", yaml);
  if (path_out)
    *path_out = path;
  try {
    load_plan(path, dir.path());
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.rfind(path, 0) == 0); // the plan file, not the scratch copy
    CHECK(what.find("plan_base.yaml") == std::string::npos);
    CHECK(what.find("plan_point.yaml") == std::string::npos);
    return what;
  }
  FAIL("the plan loaded");
  return "";
}
} // namespace

TEST_CASE("plan: points are the cartesian product, first axis slowest", "[quick][plan]")
{
  TempDir dir;
  const PlanSpec spec = load_plan(dir.write("plan.yaml", kPlan), dir.path());
  CHECK(spec.demand_metric == "output_throughput");
  CHECK(spec.demand == 1000);
  REQUIRE(spec.slos.size() == 1);
  CHECK(spec.slos[0].metric == "p99_itl_ms");
  const auto points = enumerate_points(spec);
  REQUIRE(points.size() == 8);
  CHECK(points[0].value("parallel.ep") == "8");
  CHECK(points[0].value("overlap.enable_dbo") == "false");
  CHECK(points[0].value("hardware") == "h200");
  CHECK(points[1].value("hardware") == "b200"); // the last axis varies fastest
  CHECK(points[1].value("overlap.enable_dbo") == "false");
  CHECK(points[2].value("overlap.enable_dbo") == "true");
  CHECK(points[7].value("parallel.ep") == "16");
  const std::string y = point_yaml(spec, points[7]);
  CHECK(y.find("plan:") == std::string::npos);
  CHECK(y.find("sweep:") == std::string::npos);
  CHECK(y.find("nodes: 2") != std::string::npos);
  // A shard of points is one zipped axis of every key, in the given order.
  const std::string shard = shard_sweep_yaml(spec, {points[5], points[2]});
  CHECK(shard.find("parallel.ep,parallel.dp,cluster.nodes,overlap.enable_dbo,hardware") != std::string::npos);
}

TEST_CASE("plan: a ~ in a joint axis leaves its key out of the point (MTP off and on)", "[quick][plan]")
{
  TempDir dir;
  const std::string yaml =
      replace(kPlan, "  overlap.enable_dbo: [false, true]\n",
              "  \"speculative_config.method,speculative_config.acceptance_rate\": [[none, ~], [deepseek_mtp, 0.8]]\n");
  const PlanSpec spec = load_plan(dir.write("plan.yaml", yaml), dir.path()); // every point a valid scenario
  const auto points   = enumerate_points(spec);
  REQUIRE(points.size() == 8);
  const std::string off = point_yaml(spec, points[0]);
  const std::string on  = point_yaml(spec, points[2]);
  CHECK(off.find("method: none") != std::string::npos);
  CHECK(off.find("acceptance_rate") == std::string::npos);
  CHECK(on.find("acceptance_rate: 0.8") != std::string::npos);
  CHECK_FALSE(dbosim::load_scenario(dir.write("off.yaml", off)).speculative.enabled());
  CHECK(dbosim::load_scenario(dir.write("on.yaml", on)).speculative.enabled());
  // A key that a base sets is left out too; one whose section is absent is nothing to leave out.
  const std::string with_base =
      replace(yaml, "overlap: {", "speculative_config: {method: deepseek_mtp, acceptance_rate: 0.5}\noverlap: {");
  const PlanSpec based = load_plan(dir.write("based.yaml", with_base), dir.path());
  CHECK(point_yaml(based, enumerate_points(based)[0]).find("acceptance_rate") == std::string::npos);
}

TEST_CASE("plan: blanking the plan section keeps every line", "[quick][plan]")
{
  const std::string b = blank_section(kPlan, "plan");
  CHECK(std::count(b.begin(), b.end(), '\n') == std::count(kPlan.begin(), kPlan.end(), '\n'));
  CHECK(b.find("demand") == std::string::npos);
  CHECK(b.find("sweep:") != std::string::npos);
}

TEST_CASE("plan: bad plan sections are located errors", "[quick][plan]")
{
  std::string e = error_of(replace(kPlan, "slo: {p99_itl_ms: 50}", "slo: {p99_itl: 50}"));
  CHECK(e.find(":13:") != std::string::npos);
  CHECK(e.find("p99_itl") != std::string::npos);
  CHECK(e.find("valid: mean_ttft_ms") != std::string::npos);

  e = error_of(
      replace(kPlan, "demand: {output_tokens_per_s: 1000}", "demand: {output_tokens_per_s: 1000, requests_per_s: 3}"));
  CHECK(e.find("exactly one demand") != std::string::npos);

  e = error_of(replace(kPlan, "demand: {output_tokens_per_s: 1000}", "demand: {output_tokens_per_s: -5}"));
  CHECK(e.find("plan.demand.output_tokens_per_s") != std::string::npos);

  e = error_of(replace(kPlan, "  slo: {p99_itl_ms: 50}\n", "  slo: {p99_itl_ms: 50}\n  budget: 3\n"));
  CHECK(e.find("budget") != std::string::npos);
  CHECK(e.find("valid:") != std::string::npos);

  e = error_of(replace(kPlan, "plan:\n", "planx:\n"));
  CHECK(e.find("plan") != std::string::npos);
}

TEST_CASE("plan: scenario errors in a plan name the plan file and line", "[quick][plan]")
{
  // A scenario key error: same message as a scenario's, at the plan's line 6.
  std::string e = error_of(replace(kPlan, "enable_dbo: false,", "enable_dbx: false,"));
  CHECK(e.find(":6:") != std::string::npos);
  CHECK(e.find("enable_dbx") != std::string::npos);
  CHECK(e.find("valid:") != std::string::npos);

  // A point that is not a valid scenario (EP 7 does not divide 256 experts): located at its sweep axis.
  e = error_of(replace(kPlan, "[16, 16, 2]", "[7, 7, 1]"));
  CHECK(e.find(":8:") != std::string::npos);
  CHECK(e.find("point ") != std::string::npos);
  CHECK(e.find("parallel.ep=7") != std::string::npos);

  // An unknown hardware profile in the sweep.
  e = error_of(replace(kPlan, "hardware: [h200, b200]", "hardware: [h200, z900]"));
  CHECK(e.find("z900") != std::string::npos);
}

TEST_CASE("plan: overlap.schedule is a plan axis like any scenario key", "[quick][plan]")
{
  // Crossed with DBO off: those points' steps have one micro-batch and run by vLLM's rules (a note says so). On
  // DeepSeek's engine (no public launch command) every point stays.
  const std::string axis = "  hardware: [h200, b200]\n";
  const std::string yaml = replace(kPlan, axis, axis + "  overlap.schedule: [dbo, deepseek_decode]\n");
  TempDir dir;
  const PlanSpec spec = load_plan(dir.write("plan.yaml", "engine: deepseek\n" + yaml), dir.path());
  const auto points   = enumerate_points(spec);
  REQUIRE(points.size() == 16);
  CHECK(points[1].value("overlap.schedule") == "deepseek_decode");
  CHECK(point_yaml(spec, points[1]).find("deepseek_decode") != std::string::npos);
  // Under vLLM only its own DBO order with DBO on is launchable: 4 of the 16 points.
  const PlanSpec vllm = load_plan(dir.write("plan_vllm.yaml", yaml), dir.path());
  CHECK(enumerate_points(vllm).size() == 4);
  for (const PlanPoint& p : enumerate_points(vllm)) {
    CHECK(p.value("overlap.schedule") == "dbo");
    CHECK(p.value("overlap.enable_dbo") == "true");
  }

  // A name outside the schedule table, at its sweep axis, with the table's names.
  const std::string e = error_of(replace(kPlan, axis, axis + "  overlap.schedule: [dbo, trtllm_tbo]\n"));
  CHECK(e.find("trtllm_tbo") != std::string::npos);
  CHECK(e.find("deepseek_prefill") != std::string::npos);
}

TEST_CASE("plan: an uncertainty file that does not exist is an input error at the key", "[quick][plan]")
{
  const std::string e =
      error_of(replace(kPlan, "  slo: {p99_itl_ms: 50}\n", "  slo: {p99_itl_ms: 50}\n  uncertainty: missing.yaml\n"));
  CHECK(e.find("plan.uncertainty: no such file") != std::string::npos);
  CHECK(e.find("missing.yaml") != std::string::npos);
  // One that exists, relative to the plan file, loads.
  TempDir dir;
  dir.write("band.yaml", "groups: {e2e: 12.5}\n");
  const std::string path = dir.write(
      "plan.yaml", replace(kPlan, "  slo: {p99_itl_ms: 50}\n", "  slo: {p99_itl_ms: 50}\n  uncertainty: band.yaml\n"));
  CHECK(load_plan(path, dir.path()).uncertainty == dir.path() + "/band.yaml");
}

namespace {
/** "not a <engine> flag: KEY" or "not a <engine> all-to-all: ..." for a swept KEY in `launch`, else "". */
std::string unlaunchable_line(const std::string& launch, const std::vector<std::string>& swept)
{
  std::size_t at = 0;
  while ((at = launch.find("# not a ", at)) != std::string::npos) {
    const std::size_t end  = launch.find('\n', at);
    const std::string line = launch.substr(at, end - at);
    for (const std::string& key : swept) {
      const std::string leaf = key.substr(key.rfind('.') + 1);
      if (line.find(": " + key) != std::string::npos ||
          (leaf == "all2all_backend" && line.find("all-to-all:") != std::string::npos))
        return line;
    }
    at = end;
  }
  return "";
}

/** Every point of `spec`: none whose launch says a swept key is not a flag of its engine. */
void check_every_point_launchable(const PlanSpec& spec, const TempDir& dir)
{
  for (const PlanPoint& p : enumerate_points(spec)) {
    const std::string text = dbosim::plan::format_launch(
        dbosim::plan::launch_command(dbosim::load_scenario(dir.write("point.yaml", point_yaml(spec, p)))));
    INFO("point " << p.index << " (" << p.label() << "):\n" << text);
    CHECK(unlaunchable_line(text, p.keys).empty());
  }
}
} // namespace

TEST_CASE("plan: a point its engine cannot be told is dropped, and the rest are launchable", "[quick][plan]")
{
  TempDir dir;
  // async_combine x {LL, HT} x DBO under vLLM 0.11: no backend of it runs finalize_async, so every async_combine on
  // point is dropped and the product's 8 points are 4.
  const std::string yaml =
      replace(kPlan, "  overlap.enable_dbo: [false, true]\n  hardware: [h200, b200]\n",
              "  overlap.enable_dbo: [false, true]\n  overlap.all2all_backend: [deepep_low_latency, "
              "deepep_high_throughput]\n  overlap.async_combine: [false, true]\n");
  const PlanSpec spec = load_plan(dir.write("plan.yaml", yaml), dir.path());
  CHECK(spec.product_size == 16);
  CHECK(spec.dropped.size() == 8);
  for (const PlanSpec::Dropped& d : spec.dropped) {
    CHECK(d.key == "overlap.async_combine");
    CHECK(d.note.rfind("not a vLLM flag: overlap.async_combine", 0) == 0);
  }
  const auto points = enumerate_points(spec);
  REQUIRE(points.size() == 8);
  for (std::size_t i = 0; i < points.size(); ++i) {
    CHECK(points[i].index == i); // numbered in order, without gaps
    CHECK(points[i].value("overlap.async_combine") == "false");
  }
  CHECK(dropped_line(spec).rfind("8 of 16 points dropped", 0) == 0);
  CHECK(dropped_line(spec).find("8 for overlap.async_combine") != std::string::npos);
  check_every_point_launchable(spec, dir);

  // vLLM 2026-09 runs finalize_async with deepep_v2 (the row's async_combine_backend): nothing is dropped there.
  const std::string v2 =
      replace(replace(kPlan, "  hardware: [h200, b200]\n", "  overlap.async_combine: [false, true]\n"),
              "all2all_backend: deepep_low_latency}", "all2all_backend: deepep_v2}\nengine: vllm@2026-09");
  const PlanSpec spec_v2 = load_plan(dir.write("plan_v2.yaml", v2), dir.path());
  CHECK(spec_v2.dropped.empty());
  CHECK(enumerate_points(spec_v2).size() == 8);
  CHECK(dropped_line(spec_v2).empty());
  check_every_point_launchable(spec_v2, dir);
}

TEST_CASE("plan: the shipped plans search launchable points only", "[quick][plan]")
{
  TempDir dir;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DBOSIM_SOURCE_DIR) + "/plans")) {
    INFO(entry.path());
    const PlanSpec spec = load_plan(entry.path().string(), dir.path());
    check_every_point_launchable(spec, dir);
  }
}

TEST_CASE("plan: a sweep whose every point is unlaunchable is a located error", "[quick][plan]")
{
  const std::string e = error_of(replace(kPlan, "  hardware: [h200, b200]\n", "  overlap.async_combine: [true]\n"));
  CHECK(e.find("every point is one its engine cannot be launched to run") != std::string::npos);
  CHECK(e.find("4 of 4 points dropped") != std::string::npos);
}

/* dbosim tests — config/EngineTable.hpp: every serving-engine row is complete and each of its fields drives what it
 * names (the `engine:` key, the default overlap.schedule of a step, the launch command). The loops take the rows from
 * the table: a new row is checked without a line of its own here. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/EngineTable.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/ScheduleTable.hpp"
#include "plan/LaunchCommand.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dbosim;
using models::OpKind;

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

int schedule_ubatches(sim::ScheduleId id) { return sim::schedule_traits_of(id).num_ubatches; }

/** A valid EP8 decode scenario file on one H200 node, with `extra` top-level lines. */
std::string scenario_yaml(const std::string& extra)
{
  return "model: deepseek-v3\nhardware: h200\ncluster: {nodes: 1, gpus_per_node: 8}\n"
         "parallel: {dp: 8, ep: 8, tp: 1}\nworkload: {phase: decode, tokens_per_rank: 128}\n"
         "overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}\n" +
         extra;
}

// Layer costs linear in tokens (as tests/all2all_table_test.cpp uses): only the schedule choice is looked at.
sim::CostSource linear_costs()
{
  return sim::CostSource{
      [](const models::StepShape& shape, bool moe, int) {
        models::LayerCosts lc;
        lc.moe = moe;
        for (OpKind k : {OpKind::A0, OpKind::A1, OpKind::D, OpKind::MLP, OpKind::S, OpKind::C}) {
          if (!moe && (k == OpKind::D || k == OpKind::S || k == OpKind::C))
            continue;
          models::OpCost c;
          c.kind        = k;
          c.duration_us = 5 + 0.1 * shape.tokens;
          c.kernels     = 1;
          lc.ops.push_back(c);
        }
        return lc;
      },
      [](const models::OpCost& c, int sms) { return c.duration_us * 132 / sms; },
      {},
      {},
  };
}

/** An EP8 step of `e` in `phase`, DBO on or off, on a toy GPU. */
Scenario step(const ServingEngine& e, models::Phase phase, bool dbo)
{
  Scenario s;
  s.file                = "test.yaml";
  s.engine              = &e;
  s.model.name          = "toy";
  s.model.num_layers    = 2;
  s.model.first_k_dense = 0;
  s.hw.name             = "toy-gpu";
  s.hw.sm_count         = 132;
  s.step.phase          = phase;
  s.step.tokens         = 1024;
  s.step.batch          = phase == models::Phase::decode ? 1024 : 1;
  s.overlap.enable_dbo  = dbo;
  s.parallel.dp = s.parallel.ep = 8;
  return s;
}

} // namespace

TEST_CASE("engine table: every rule of every row names a source", "[quick]")
{
  for (const ServingEngine& e : serving_engines)
    for (const NamedRule& r : engine_rules) {
      INFO(engine_id(e) << " " << r.what);
      const std::string source = (e.*r.rule).source;
      // a URL, a file at a commit, or the evidence note that cites one
      CHECK((contains(source, "https://") || contains(source, " @") || contains(source, "docs/engines-evidence.md")));
      CHECK_FALSE(std::string((e.*r.rule).rule).empty());
    }
}

// GCC 12 at -O3 reports a bogus -Wstringop-overread in find_engine inlined on a temporary string (SIZE_MAX bound).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
TEST_CASE("engine table: a bare name is its default row, NAME@VERSION its own, anything else none", "[quick]")
{
  for (const ServingEngine& e : serving_engines) {
    INFO(engine_id(e));
    CHECK(find_engine(engine_id(e)) == &e);
    const ServingEngine* bare = find_engine(e.name);
    REQUIRE(bare != nullptr);
    CHECK(bare->is_default);
    CHECK(std::string(bare->name) == e.name);
    CHECK(find_engine(std::string(e.name) + "@no-such-version") == nullptr);
    CHECK(find_engine(std::string(e.name) + "x") == nullptr);
  }
  CHECK(&default_engine() == find_engine(default_engine().name));
  CHECK(default_engine().launch == LaunchFamily::vllm_serve); // today's outputs are vLLM's
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

TEST_CASE("engine table: the scenario's engine key reads every row and refuses others with the rows listed", "[quick]")
{
  test::TempDir dir;
  CHECK(load_scenario(dir.write("none.yaml", scenario_yaml(""))).engine == &default_engine());
  for (const ServingEngine& e : serving_engines) {
    INFO(engine_id(e));
    CHECK(load_scenario(dir.write("pinned.yaml", scenario_yaml("engine: " + engine_id(e) + "\n"))).engine == &e);
    CHECK(load_scenario(dir.write("bare.yaml", scenario_yaml(std::string("engine: ") + e.name + "\n"))).engine ==
          find_engine(e.name));
  }
  const std::string bad = dir.write("bad.yaml", scenario_yaml("engine: vllm@0.0\n"));
  try {
    load_scenario(bad);
    FAIL("engine vllm@0.0 was accepted");
  } catch (const InputError& err) {
    CHECK(err.key() == "engine");
    CHECK(err.line() == 7);
    for (const ServingEngine& e : serving_engines)
      CHECK(contains(err.what(), engine_id(e)));
  }
}

TEST_CASE("engine table: a step without overlap.schedule runs its engine's schedule where the micro-batches fit",
          "[quick]")
{
  for (const ServingEngine& e : serving_engines)
    for (models::Phase phase : {models::Phase::decode, models::Phase::prefill})
      for (bool dbo : {false, true}) {
        const sim::ScheduleId row = engine_schedule(e, phase == models::Phase::prefill);
        INFO(engine_id(e) << (dbo ? " DBO" : "") << " " << sim::schedule_name(row));
        const sim::StepPlan p = sim::build_step_plan(step(e, phase, dbo), step(e, phase, dbo).step, linear_costs());
        const int nub         = dbo ? 2 : 1;
        CHECK(schedule_ubatches(p.schedule) == nub);
        if (schedule_ubatches(row) == nub)
          CHECK(p.schedule == row);
        else
          CHECK(p.schedule == (dbo ? sim::ScheduleId::dbo : sim::ScheduleId::serial)); // vLLM's rules
        for (const std::string& note : p.notes)
          CHECK_FALSE(contains(note, "overlap.schedule")); // the scenario named none
      }
}

TEST_CASE("engine table: every row's launch builds, in its family and with the row's spellings", "[quick]")
{
  test::TempDir dir;
  for (const ServingEngine& e : serving_engines)
    for (int nodes : {1, 2}) {
      INFO(engine_id(e) << " on " << nodes << " node(s)");
      std::string text = scenario_yaml("engine: " + engine_id(e) + "\n");
      if (nodes == 2)
        text = "engine: " + engine_id(e) +
               "\nmodel: deepseek-v3\nhardware: h200\ncluster: {nodes: 2, gpus_per_node: 8}\n"
               "parallel: {dp: 16, ep: 16, tp: 1}\nworkload: {phase: decode, tokens_per_rank: 128}\n"
               "overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}\n";
      const Scenario s            = load_scenario(dir.write("launch.yaml", text));
      const plan::LaunchCommand l = plan::launch_command(s);
      if (e.launch == LaunchFamily::none) {
        CHECK(l.nodes.empty());
        REQUIRE_FALSE(l.notes.empty());
        CHECK(contains(l.notes[0], e.label));
        continue;
      }
      REQUIRE_FALSE(l.nodes.empty());
      for (const std::string& node : l.nodes) {
        CHECK(node.rfind(std::string(e.launch_text) + " ", 0) == 0);
        CHECK(contains(node, "deepseek-ai/DeepSeek-V3"));
        if (*e.deepep_flag)
          CHECK(contains(node, std::string(e.deepep_flag) + " --deepep-mode low_latency"));
      }
      CHECK(contains(plan::format_launch(l), l.nodes.front()));
    }
}

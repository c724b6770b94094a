/* dbosim tests — config/EngineTable.hpp: every serving-engine row is complete and each of its fields drives what it
 * names (the `engine:` key, the default overlap.schedule of a step, the launch command). The loops take the rows from
 * the table: a new row is checked without a line of its own here. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/EngineTable.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/ScheduleTable.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dbosim;

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

int schedule_ubatches(const std::string& name)
{
  for (const sim::ScheduleTraits& t : sim::schedule_traits)
    if (name == t.name)
      return t.num_ubatches;
  return 0;
}

/** A valid EP8 decode scenario file on one H200 node, with `extra` top-level lines. */
std::string scenario_yaml(const std::string& extra)
{
  return "model: deepseek-v3\nhardware: h200\ncluster: {nodes: 1, gpus_per_node: 8}\n"
         "parallel: {dp: 8, ep: 8, tp: 1}\nworkload: {phase: decode, tokens_per_rank: 128}\n"
         "overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}\n" +
         extra;
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

TEST_CASE("engine table: every default schedule is a row of the schedule table", "[quick]")
{
  for (const ServingEngine& e : serving_engines) {
    INFO(engine_id(e));
    CHECK(schedule_ubatches(e.decode_schedule) > 0);
    CHECK(schedule_ubatches(e.prefill_schedule) > 0);
  }
}

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

/* models::QuietCosts drops the cost explanations, never a number: every shipped scenario's step plan (every op of
 * every micro-batch, full-GPU and partitioned, the work outside the layers) is the same with and without them. */
#include "config/ScenarioLoader.hpp"
#include "models/CostExplain.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace dbosim;

TEST_CASE("models::QuietCosts: the same step plan without explanations, on every shipped scenario", "[quick]")
{
  int scenarios = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(DBOSIM_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".yaml")
      continue;
    const Scenario s         = load_scenario(e.path().string());
    const sim::StepPlan loud = sim::build_step_plan(s, s.step, sim::model_cost_source(s));
    sim::StepPlan quiet_plan;
    {
      const models::QuietCosts quiet;
      CHECK(!models::cost_explanations());
      quiet_plan = sim::build_step_plan(s, s.step, sim::model_cost_source(s));
    }
    CHECK(models::cost_explanations()); // restored at the end of its scope
    INFO(e.path().filename().string());
    REQUIRE(loud.ubatches.size() == quiet_plan.ubatches.size());
    CHECK(loud.step_work_us == quiet_plan.step_work_us);
    for (std::size_t u = 0; u < loud.ubatches.size(); ++u)
      for (const bool moe : {false, true}) {
        const auto& a = moe ? loud.ubatches[u].moe : loud.ubatches[u].dense;
        const auto& b = moe ? quiet_plan.ubatches[u].moe : quiet_plan.ubatches[u].dense;
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          CHECK(a[i].duration_us == b[i].duration_us);
          CHECK(a[i].partitioned_duration_us == b[i].partitioned_duration_us);
          CHECK(a[i].flight_us == b[i].flight_us);
          CHECK(a[i].kernels == b[i].kernels);
        }
      }
    ++scenarios;
  }
  CHECK(scenarios >= 10);
}

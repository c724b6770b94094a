/* dbosim validate — the overlap testbed's plans and predictions: the plan file is the schedule builder's op list
 * with its cross-stream waits; op durations come from the profile's tables and SM curves; shapes are strict. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "models/OpTables.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"
#include "validate/TestbedPlan.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace dbosim;
using namespace dbosim::validate;

namespace {
const std::string shapes_path = std::string(DBOSIM_SOURCE_DIR) + "/validate/testbed/shapes.yaml";

int count(const std::string& text, const std::string& what)
{
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1))
    ++n;
  return n;
}
} // namespace

TEST_CASE("validate testbed: plan files are the schedule's op list with cross-stream waits", "[quick]")
{
  const auto shapes          = load_testbed_shapes(shapes_path);
  const models::HwProfile hw = load_hw_profile("h200");
  const TestbedShape& s      = shapes.shapes.at(0);
  for (const TestbedVariant& v : testbed_variants()) {
    INFO(v.name);
    const sim::StepPlan plan  = testbed_step_plan(s, v, hw, shapes.gemm_family);
    const sim::Schedule sched = sim::build_schedule(plan);
    const std::string text    = testbed_plan_text(s, v, sched, hw);
    CHECK(count(text, "\nop ") == static_cast<int>(sched.num_ops()));
    CHECK(count(text, " copy ") == 2 * s.layers * plan.num_ubatches());
    CHECK(text.find("partition_compute_sms " + std::to_string(v.partition ? hw.sm_count - s.comm_ctas : 0)) !=
          std::string::npos);
    CHECK(text.find(v.comm_high_priority ? "comm_priority high" : "comm_priority default") != std::string::npos);
    // serial: one stream, no waits; the others join two streams by events
    std::istringstream in(text);
    std::string line;
    int waits = 0;
    while (std::getline(in, line))
      if (line.rfind("op ", 0) == 0 && line.substr(line.find(" waits") + 6).find_first_not_of(' ') != std::string::npos)
        ++waits;
    if (v.schedule == sim::ScheduleId::serial)
      CHECK(waits == 0);
    else
      CHECK(waits > 0);
  }
}

TEST_CASE("validate testbed: op durations come from the profile's tables and SM curves", "[quick]")
{
  const auto shapes          = load_testbed_shapes(shapes_path);
  const models::HwProfile hw = load_hw_profile("h200");
  const TestbedShape& s      = shapes.shapes.at(0);
  const TestbedVariant& dbo  = testbed_variants().at(2);
  const TestbedVariant& grn  = testbed_variants().at(3);
  REQUIRE(dbo.name == "dbo");
  REQUIRE(grn.name == "dbo_green");
  const sim::StepPlan p = testbed_step_plan(s, dbo, hw, shapes.gemm_family);
  const sim::StepPlan g = testbed_step_plan(s, grn, hw, shapes.gemm_family);
  REQUIRE(p.num_ubatches() == 2);
  const auto* table = models::find_table(hw, "gemm_bf16", {{"n", s.a1.n}, {"k", s.a1.k}});
  REQUIRE(table != nullptr);
  const double a1_us = models::table_us(table->us_by_tokens, s.tokens / 2.0);
  CHECK(p.ubatches[0].find(true, models::OpKind::A1)->duration_us == Approx(a1_us));
  // on the partition: the per-shape SM table of A1's GEMM at these SMs (the profile measures every testbed GEMM)
  const auto* sm_table =
      models::find_sm_table(hw, "gemm_bf16", {{"n", s.a1.n}, {"k", s.a1.k}}, hw.sm_count - s.comm_ctas);
  REQUIRE(sm_table != nullptr);
  const double speed = models::speed_at_tokens(sm_table->speed_by_tokens, s.tokens / 2.0);
  CHECK(g.ubatches[0].find(true, models::OpKind::A1)->partitioned_duration_us == Approx(a1_us / speed));
  CHECK(g.gpu.comm_sms == s.comm_ctas);
  const double bw = models::speed_at_sms(hw.comm_kernel_bytes_per_s_by_sms, s.comm_ctas);
  CHECK(p.ubatches[0].find(true, models::OpKind::D)->duration_us ==
        Approx(s.tokens / 2.0 * s.comm_bytes_per_token / bw * 1e6));
  CHECK(p.host.cuda_graph);
  CHECK(p.gpu.interference_shared == Approx(hw.interference.compute_with_comm.value()));
}

TEST_CASE("validate testbed: strict shapes file", "[quick]")
{
  test::TempDir dir;
  const std::string dims = "a0: {n: 2112, k: 7168}, a1: {n: 7168, k: 16384}, mlp: {n: 4096, k: 7168}, "
                           "s: {n: 7168, k: 2048}";
  auto file              = [&](const std::string& shape) {
    return dir.write("s.yaml", "gemm_family: gemm_bf16\nshapes:\n  - {" + shape + ", " + dims + "}\n");
  };
  CHECK(load_testbed_shapes(file("name: a, tokens: 256, layers: 2, comm_ctas: 20, comm_bytes_per_token: 100"))
            .shapes.size() == 1);
  CHECK_THROWS_WITH(
      load_testbed_shapes(file("name: a, tokens: 255, layers: 2, comm_ctas: 20, comm_bytes_per_token: 100")),
      Catch::Contains("even"));
  CHECK_THROWS_WITH(
      load_testbed_shapes(file("name: a, tokens: 256, layers: 2, comm_ctas: 20, comm_bytes_per_token: 100, x: 1")),
      Catch::Contains("x"));
  // a GEMM shape the profile has no table for is an error, not a silent roofline
  const auto shapes = load_testbed_shapes(
      dir.write("t.yaml", "gemm_family: gemm_bf16\nshapes:\n  - {name: a, tokens: 256, layers: 1, comm_ctas: 20, "
                          "comm_bytes_per_token: 100, a0: {n: 1000, k: 1000}, a1: {n: 7168, k: 16384}, "
                          "mlp: {n: 4096, k: 7168}, s: {n: 7168, k: 2048}}\n"));
  CHECK_THROWS_WITH(testbed_step_plan(shapes.shapes[0], testbed_variants()[0], load_hw_profile("h200"), "gemm_bf16"),
                    Catch::Contains("no measured table"));
}

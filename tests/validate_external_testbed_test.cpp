/* dbosim validate — external testbeds: the op-list format is read strictly (errors name file, line, key and what is
 * valid), the shipped testbed converted to it predicts the shipped path's makespan, and recordings are read as
 * Chrome traces or CSV. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/InputFile.hpp"
#include "models/OpTables.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"
#include "testbed_ops_support.hpp"
#include "validate/ChildSim.hpp"
#include "validate/ExternalTestbed.hpp"
#include "validate/TestbedPlan.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dbosim;
using namespace dbosim::validate;

namespace {
const std::string source_dir = DBOSIM_SOURCE_DIR;

/* Two GEMMs on the compute stream and a copy on the comm stream between them; `extra` appends ops. */
std::string ops_file(const std::string& extra = "", const std::string& copy_stream = "comm",
                     const std::string& kind = "gemm")
{
  return "profile: h200\n"
         "ops:\n"
         "  - {name: a, stream: compute, kernel: {kind: " +
         kind +
         ", m: 128, n: 2112, k: 7168}}\n"
         "  - {name: d, stream: " +
         copy_stream +
         ", depends_on: [a], kernel: {kind: copy, bytes: 1048576, ctas: 20}}\n"
         "  - {name: b, stream: compute, depends_on: [d], kernel: {kind: gemm, m: 128, n: 7168, k: 2048}}\n" +
         extra;
}

std::string load_error(const std::string& text) { return test::testbed_ops_error(text); }
} // namespace

TEST_CASE("validate external testbed: a small op list is read into ops in issue order", "[quick]")
{
  test::TempDir dir;
  const TestbedOps t = load_testbed_ops(dir.write(
      "t.yaml", ops_file("  - {name: g, stream: compute, ubatch: 1, depends_on: [a, b],\n"
                         "     kernel: {kind: grouped_gemm, groups: 8, m: 64, n: 4096, k: 7168, dtype: fp8}}\n"
                         "  - {name: h, stream: compute, ubatch: 1, kernel: {kind: batched_gemm, batch: 128, m: 64, "
                         "n: 512, k: 128}}\n")));
  CHECK(t.name == "t");
  CHECK(t.profile == "h200");
  REQUIRE(t.ops.size() == 5);
  CHECK(t.ops[1].stream == sim::StreamId::comm);
  CHECK(t.ops[1].depends_on == std::vector<int>{0});
  CHECK(t.ops[3].depends_on == std::vector<int>{0, 2});
  CHECK(t.ops[3].kernel.kind == TestbedKernelKind::grouped_gemm);
  CHECK(t.ops[3].kernel.batch == 8);
  CHECK(t.ops[3].kernel.dtype == models::DType::fp8);
  CHECK(t.ops[4].kernel.kind == TestbedKernelKind::batched_gemm);
  CHECK(t.num_ubatches() == 2);
  CHECK(t.ops[3].line == 6);
  // every kernel kind is priced by the profile, and the replay runs
  const ExternalPrediction p = predict_external(t, load_hw_profile("h200"));
  REQUIRE(p.span_us.size() == 5);
  CHECK(p.span_us[1].first >= p.span_us[0].second); // d waits for a
  CHECK(p.span_us[2].first >= p.span_us[1].second); // b waits for d
  CHECK(p.makespan_us > 0);
}

TEST_CASE("validate external testbed: parser errors name the file, line, key and what is valid", "[quick]")
{
  SECTION("unknown kernel kind")
  {
    const std::string m = load_error(ops_file("", "comm", "conv2d"));
    CHECK_THAT(m, Catch::Contains(":3:") && Catch::Contains("ops[0].kernel.kind") &&
                      Catch::Contains("gemm, batched_gemm, grouped_gemm, copy"));
  }
  SECTION("dependency on an unknown op")
  {
    const std::string m = load_error(
        ops_file("  - {name: c, stream: comm, depends_on: [b, nope], kernel: {kind: copy, bytes: 1, ctas: 1}}\n"));
    CHECK_THAT(m,
               Catch::Contains(":6:") && Catch::Contains("ops[3].depends_on") && Catch::Contains("unknown op 'nope'"));
  }
  SECTION("cycle")
  {
    const std::string m = load_error("profile: h200\nops:\n"
                                     "  - {name: x, stream: compute, depends_on: [z], kernel: {kind: gemm, m: 1, n: 1, "
                                     "k: 1}}\n"
                                     "  - {name: y, stream: compute, depends_on: [x], kernel: {kind: gemm, m: 1, n: 1, "
                                     "k: 1}}\n"
                                     "  - {name: z, stream: comm, depends_on: [y], kernel: {kind: copy, bytes: 1, "
                                     "ctas: 1}}\n");
    CHECK_THAT(m, Catch::Contains("dependency cycle: x -> z -> y -> x") && Catch::Contains("ops[0].depends_on"));
  }
  SECTION("bad stream")
  {
    const std::string m = load_error(ops_file("", "nvlink"));
    CHECK_THAT(m, Catch::Contains(":4:") && Catch::Contains("ops[1].stream") && Catch::Contains("compute, comm"));
  }
  SECTION("a dependency on an op listed later")
  {
    const std::string m = load_error("profile: h200\nops:\n"
                                     "  - {name: x, stream: compute, depends_on: [y], kernel: {kind: gemm, m: 1, n: 1, "
                                     "k: 1}}\n"
                                     "  - {name: y, stream: comm, kernel: {kind: copy, bytes: 1, ctas: 1}}\n");
    CHECK_THAT(m, Catch::Contains("listed later") && Catch::Contains("ops[0].depends_on"));
  }
  SECTION("duplicate names, unknown keys, shapes out of range")
  {
    CHECK_THAT(load_error(ops_file("  - {name: a, stream: compute, kernel: {kind: gemm, m: 1, n: 1, k: 1}}\n")),
               Catch::Contains("duplicate op name 'a'"));
    CHECK_THAT(
        load_error(ops_file("  - {name: e, stream: compute, kernel: {kind: gemm, m: 1, n: 1, k: 1, ctas: 3}}\n")),
        Catch::Contains("ops[3].kernel.ctas"));
    CHECK_THAT(load_error(ops_file("  - {name: e, stream: compute, kernel: {kind: gemm, m: 0, n: 1, k: 1}}\n")),
               Catch::Contains("ops[3].kernel.m"));
    CHECK_THAT(load_error(ops_file("  - {name: e, stream: comm, kernel: {kind: copy, bytes: 1, ctas: 1, "
                                   "smem_bytes_per_cta: -1}}\n")),
               Catch::Contains("ops[3].kernel.smem_bytes_per_cta"));
  }
}

TEST_CASE("validate external testbed: a partition must fit the profile's SMs", "[quick]")
{
  test::TempDir dir;
  const TestbedOps t =
      load_testbed_ops(dir.write("t.yaml", "partition: {compute_sms: 120, comm_sms: 20}\n" + ops_file()));
  std::vector<sim::OpSpec> specs;
  CHECK_THROWS_WITH(external_step_plan(t, load_hw_profile("h200"), specs),
                    Catch::Contains("partition") && Catch::Contains("exceed the 132 SMs"));
}

TEST_CASE("validate external testbed: the shipped testbed converted to op lists predicts the shipped makespans",
          "[quick]")
{
  const TestbedShapes shapes = load_testbed_shapes(source_dir + "/validate/testbed/shapes.yaml");
  const models::HwProfile hw = load_hw_profile("h200");
  const TestbedShape& s      = shapes.shapes.at(0);
  test::TempDir dir;
  for (const TestbedVariant& v : testbed_variants()) {
    INFO(v.name);
    const sim::StepPlan plan  = testbed_step_plan(s, v, hw, shapes.gemm_family);
    const sim::Schedule sched = sim::build_schedule(plan);
    const std::string text    = testbed_ops_yaml(testbed_ops_of(s, v, sched, hw), "");
    const TestbedOps t        = load_testbed_ops(dir.write(v.name + ".yaml", text));
    CHECK(testbed_ops_yaml(t, "") == text); // the format round-trips
    const double shipped  = simulate_in_child(plan).makespan_us;
    const double external = predict_external(t, hw).makespan_us;
    CHECK(std::abs(external / shipped - 1) < 1e-3);
  }
}

TEST_CASE("validate external testbed: the shipped example matches the shipped path and its recording", "[quick]")
{
  const std::string ext      = source_dir + "/validate/testbed/external/decode_t256_c20__dbo";
  const TestbedShapes shapes = load_testbed_shapes(source_dir + "/validate/testbed/shapes.yaml");
  const models::HwProfile hw = load_hw_profile("h200");
  const TestbedShape& s      = shapes.shapes.at(0);
  const TestbedVariant& v    = testbed_variants().at(2);
  REQUIRE(s.name == "decode_t256_c20");
  REQUIRE(v.name == "dbo");
  const TestbedOps t = load_testbed_ops(ext + ".yaml");
  // the example is what --write-testbed-ops writes today
  const sim::StepPlan plan = testbed_step_plan(s, v, hw, shapes.gemm_family);
  CHECK(testbed_ops_yaml(t, "") == testbed_ops_yaml(testbed_ops_of(s, v, sim::build_schedule(plan), hw), ""));
  const double shipped       = simulate_in_child(plan).makespan_us;
  const ExternalPrediction p = predict_external(t, hw);
  CHECK(std::abs(p.makespan_us / shipped - 1) < 1e-3);
  std::vector<std::string> names;
  for (const TestbedOp& op : t.ops)
    names.push_back(op.name);
  const OpRecording rec = load_op_recording(ext + ".csv", names);
  CHECK(rec.reps == 9);
  CHECK(rec.ignored_events == 0);
  const auto rows = compare_external(t, p, rec, 10, "test");
  REQUIRE(rows.size() == 1 + t.ops.size());
  CHECK(rows[0].metric == "makespan");
  CHECK(rows[0].measured == Approx(1343.68).epsilon(1e-4)); // the shipped comparison's median of the JSON recording
  CHECK(rows[0].pass());
}

TEST_CASE("validate external testbed: recordings as Chrome trace or CSV", "[quick]")
{
  test::TempDir dir;
  const std::vector<std::string> ops = {"a", "d"};
  SECTION("Chrome trace: events named by the op, repeats by occurrence, other events ignored")
  {
    const OpRecording r = load_op_recording(dir.write("r.json", R"({"traceEvents": [
          {"name": "a", "ph": "X", "ts": 0, "dur": 10}, {"name": "d", "ph": "X", "ts": 10, "dur": 5},
          {"name": "memset", "ph": "X", "ts": 1, "dur": 1}, {"name": "a", "ph": "M"},
          {"name": "a", "ph": "X", "ts": 0, "dur": 12}, {"name": "d", "ph": "X", "ts": 12, "dur": 6},
          {"name": "a", "ph": "X", "ts": 0, "dur": 14}, {"name": "d", "ph": "X", "ts": 14, "dur": 7}]})"),
                                            ops);
    CHECK(r.reps == 3);
    CHECK(r.ignored_events == 1);
    CHECK(r.median_duration_us("a") == Approx(12));
    CHECK(r.median_makespan_us() == Approx(18));
  }
  SECTION("CSV")
  {
    const OpRecording r = load_op_recording(dir.write("r.csv", "op,start_us,end_us\na,0,10\nd,10,15\n"), ops);
    CHECK(r.reps == 1);
    CHECK(r.median_makespan_us() == Approx(15));
  }
  SECTION("errors")
  {
    CHECK_THROWS_WITH(load_op_recording(dir.write("r.csv", "op,start_us,end_us\na,0,10\n"), ops),
                      Catch::Contains("d: the recording has no event of this op"));
    CHECK_THROWS_WITH(load_op_recording(dir.write("r.csv", "op,start_us,end_us\na,0,10\nd,1,x\n"), ops),
                      Catch::Contains("r.csv:3:") && Catch::Contains("end_us"));
    CHECK_THROWS_WITH(load_op_recording(dir.write("r.csv", "op,start_us,end_us\na,0,10\nd,1,2\na,0,1\n"), ops),
                      Catch::Contains("every op once per repeat"));
    CHECK_THROWS_WITH(load_op_recording(dir.write("r.txt", ""), ops), Catch::Contains(".json (Chrome trace), .csv"));
  }
}

namespace {
/** The duration of one copy kernel of `ctas` CTAs reserving `smem` bytes each, on h200, under `partition` (a
 *  "partition: ..." line or ""). */
double copy_duration(int ctas, int smem, const std::string& partition = "")
{
  test::TempDir dir;
  const TestbedOps t = load_testbed_ops(
      dir.write("t.yaml", partition +
                              "profile: h200\nops:\n  - {name: d, stream: comm, kernel: {kind: copy, bytes: "
                              "14680064, ctas: " +
                              std::to_string(ctas) + ", smem_bytes_per_cta: " + std::to_string(smem) + "}}\n"));
  std::vector<sim::OpSpec> specs;
  external_step_plan(t, load_hw_profile("h200"), specs);
  REQUIRE(specs.size() == 1);
  return specs[0].duration_us;
}
} // namespace

TEST_CASE("validate external testbed: copy CTAs beyond what the SMs hold run in waves", "[quick]")
{
  // 192 KiB per CTA: one CTA per H200 SM (228 KB each), so 20 comm SMs hold 20 CTAs and 1024 CTAs take 52 waves.
  const std::string green = "partition: {compute_sms: 112, comm_sms: 20}\n";
  const double c20        = copy_duration(20, 196608, green);
  const double c1024      = copy_duration(1024, 196608, green);
  CHECK(c1024 >= c20); // the same bytes on the same 20 SMs, the last wave on 4 of them
  CHECK(c1024 < 1.05 * c20);
  // Without a reservation the CTAs share the 20 SMs: one wave at the curve's 20-SM speed.
  CHECK(copy_duration(1024, 0, green) == Approx(c20));
  // The whole GPU: 264 CTAs are two full waves of 132, each half the bytes at the 132-SM speed.
  CHECK(copy_duration(264, 196608) == Approx(copy_duration(132, 196608)));
  // 1024 CTAs: 7 full waves of 132 and one of 100, each its share of the bytes at the curve's speed on its SMs.
  const models::Curve& curve = load_hw_profile("h200").comm_kernel_bytes_per_s_by_sms;
  CHECK(copy_duration(1024, 196608) ==
        Approx(14680064.0 *
               (924.0 / 1024 / models::speed_at_sms(curve, 132) + 100.0 / 1024 / models::speed_at_sms(curve, 100)) *
               1e6));
  // 96 KiB per CTA: two per SM, so 264 CTAs are one wave on 132 SMs.
  CHECK(copy_duration(264, 98304) == Approx(copy_duration(132, 98304)));
}

TEST_CASE("validate external testbed: a CTA reserving more shared memory than an SM holds is rejected", "[quick]")
{
  test::TempDir dir;
  const std::string path = dir.write("t.yaml", "profile: h200\nops:\n  - {name: d, stream: comm, kernel: {kind: copy, "
                                               "bytes: 1048576, ctas: 20, smem_bytes_per_cta: 262144}}\n");
  const TestbedOps t     = load_testbed_ops(path);
  std::vector<sim::OpSpec> specs;
  CHECK_THROWS_WITH(external_step_plan(t, load_hw_profile("h200"), specs),
                    Catch::StartsWith(path + ":3:") && Catch::Contains("smem_bytes_per_cta") &&
                        Catch::Contains("262144 B per CTA exceed the 233472 B") && Catch::Contains("valid: 0..233472"));
}

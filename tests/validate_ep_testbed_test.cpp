/* dbosim validate — the expert-parallel testbed's records (validate/testbed/ep, written by kernels/ep_testbed.py on
 * one H200): every op list and per-rank recording is read through the external-testbed reader, the recorded spans
 * respect the op list's dependencies, the reader's makespan is the one the run wrote, and each case is predicted.
 * Also the collective's keys (world_size, kind all_to_all, ranks) and per-rank recordings are read strictly. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "testbed_ops_support.hpp"
#include "validate/ExternalTestbed.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

using namespace dbosim;
using namespace dbosim::validate;

namespace {
const std::filesystem::path ep_dir = std::filesystem::path(DBOSIM_SOURCE_DIR) / "validate" / "testbed" / "ep";

std::vector<std::string> op_names(const TestbedOps& t)
{
  std::vector<std::string> names;
  for (const TestbedOp& op : t.ops)
    names.push_back(op.name);
  return names;
}

/* records.jsonl: case -> mode -> record. */
std::map<std::string, std::map<std::string, nlohmann::json>> run_records()
{
  std::map<std::string, std::map<std::string, nlohmann::json>> out;
  std::ifstream in(ep_dir / "records.jsonl");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) {
      const nlohmann::json j                                                = nlohmann::json::parse(line);
      out[j.at("case").get<std::string>()][j.at("mode").get<std::string>()] = j;
    }
  return out;
}

std::string load_error(const std::string& text) { return test::testbed_ops_error(text); }

const std::string a2a_list = "profile: h200\nworld_size: 4\nops:\n"
                             "  - {name: g, stream: compute, kernel: {kind: gemm, m: 64, n: 2112, k: 7168}}\n"
                             "  - {name: d, stream: comm, depends_on: [g],\n"
                             "     kernel: {kind: all_to_all, bytes: 7340032, ranks: [0, 1, 2, 3]}}\n";
} // namespace

TEST_CASE("validate ep testbed: the committed H200 records read, respect their dependencies and are predicted",
          "[quick]")
{
  const auto records         = run_records();
  const models::HwProfile hw = load_hw_profile("h200");
  std::map<std::string, double> predicted; // case -> predicted makespan
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ep_dir)) {
    if (entry.path().extension() != ".yaml")
      continue;
    ++cases;
    const TestbedOps t     = load_testbed_ops(entry.path().string());
    const std::string stem = entry.path().stem().string();
    INFO(stem);
    CHECK(t.world_size == 1);
    // the ops of every layer and micro-batch are there: 9 per layer and micro-batch, two layers
    const bool dbo = stem.find("__dbo") != std::string::npos;
    CHECK(t.ops.size() == std::size_t(2 * 9 * (dbo ? 2 : 1)));
    int collectives = 0;
    for (const TestbedOp& op : t.ops)
      if (op.kernel.kind == TestbedKernelKind::all_to_all) {
        ++collectives;
        CHECK(op.stream == sim::StreamId::comm);
        CHECK(op.kernel.ranks == std::vector<int>{0});
        CHECK(op.kernel.bytes > 0);
      }
    CHECK(collectives == 2 * 2 * (dbo ? 2 : 1));

    const OpRecording rec = load_rank_recordings((ep_dir / (stem + ".rank{rank}.csv")).string(), 1, op_names(t));
    CHECK(rec.reps == 20);
    CHECK(rec.ranks == 1);
    // every recorded op starts after the ops it waits for ended (CUDA events; the CSV keeps 1 ns)
    int violations = 0;
    for (std::size_t i = 0; i < t.ops.size(); ++i)
      for (int d : t.ops[i].depends_on)
        for (int r = 0; r < rec.reps; ++r)
          violations += rec.spans_us.at(t.ops[i].name)[std::size_t(r)].first <
                        rec.spans_us.at(t.ops[std::size_t(d)].name)[std::size_t(r)].second - 0.002;
    CHECK(violations == 0);
    // the reader's makespan (median of last end minus first start) is the one the run wrote
    REQUIRE(records.count(stem) == 1);
    const nlohmann::json& eager = records.at(stem).at("eager");
    CHECK(std::abs(rec.median_makespan_us() - eager.at("median_us").get<double>()) < 0.01);
    CHECK(eager.at("provenance").at("gpu") == "NVIDIA H200");
    const nlohmann::json& graph = records.at(stem).at("graph");
    CHECK(graph.at("error") == "");
    CHECK(graph.at("makespan_us").size() == 20);

    const ExternalPrediction p = predict_external(t, hw);
    REQUIRE(p.span_us.size() == t.ops.size());
    for (std::size_t i = 0; i < t.ops.size(); ++i)
      for (int d : t.ops[i].depends_on)
        CHECK(p.span_us[i].first >= p.span_us[std::size_t(d)].second - 1e-9);
    predicted[stem] = p.makespan_us;
    const auto rows = compare_external(t, p, rec, 100, "ep");
    CHECK(rows.front().group == "external_makespan");
    CHECK(std::isfinite(rows.front().measured));
    CHECK(rows.front().measured > 0);
    // the model and the run agree on the order of magnitude (the recorded figures: validate/testbed/ep/README.md)
    CHECK(p.makespan_us > 0.5 * rec.median_makespan_us());
    CHECK(p.makespan_us < 2.0 * rec.median_makespan_us());
  }
  CHECK(cases == 34); // 6 shapes x 2 routings x 3 schedules, less dbo at 1 token
  // the model's overlap: async combine never longer than serial for the same shape
  for (const auto& [stem, ms] : predicted) {
    const auto cut = stem.find("__serial");
    if (cut != std::string::npos)
      CHECK(predicted.at(stem.substr(0, cut) + "__async_combine") <= ms + 1e-6);
  }
}

TEST_CASE("validate ep testbed: all_to_all ops are read strictly and priced over NVLink among ranks", "[quick]")
{
  test::TempDir dir;
  const TestbedOps t = load_testbed_ops(dir.write("t.yaml", a2a_list));
  CHECK(t.world_size == 4);
  REQUIRE(t.ops[1].kernel.kind == TestbedKernelKind::all_to_all);
  CHECK(t.ops[1].kernel.recv_bytes == t.ops[1].kernel.bytes); // default: as many received as sent
  // round trip through the writer
  const TestbedOps back = load_testbed_ops(dir.write("back.yaml", testbed_ops_yaml(t, "")));
  CHECK(back.world_size == 4);
  CHECK(back.ops[1].kernel.ranks == t.ops[1].kernel.ranks);
  // among 4 ranks: 3/4 of the bytes over NVLink after its latency, 1/4 copied locally
  const models::HwProfile hw = load_hw_profile("h200");
  std::vector<sim::OpSpec> specs;
  external_step_plan(t, hw, specs);
  const double b = 7340032;
  CHECK(specs[1].duration_us ==
        Approx(hw.nvlink_latency_us + 0.75 * b / hw.nvlink_bytes_per_s * 1e6 + 2 * b / 4 / hw.hbm_bytes_per_s * 1e6));
  CHECK(specs[1].kind == models::OpKind::D);

  std::string base               = a2a_list.substr(0, a2a_list.find("ranks:"));
  const std::string out_of_range = load_error(base + "ranks: [0, 4]}}\n");
  CHECK_THAT(out_of_range, Catch::Contains("ranks"));
  CHECK_THAT(out_of_range, Catch::Contains("no rank of world_size 4"));
  CHECK_THAT(load_error(base + "ranks: [1, 1]}}\n"), Catch::Contains("listed twice"));
  CHECK_THAT(load_error(base + "ranks: []}}\n"), Catch::Contains("non-empty"));
  CHECK_THAT(load_error(base + "ranks: [0], ctas: 4}}\n"), Catch::Contains("ctas"));
  CHECK_THAT(load_error("profile: h200\nworld_size: 0\nops:\n  - {name: g, stream: compute, kernel: {kind: gemm, m: "
                        "1, n: 1, k: 1}}\n"),
             Catch::Contains("world_size"));
  // a multi-rank list needs one recording per rank
  try {
    load_rank_recordings(dir.write("r.csv", "op,start_us,end_us\ng,0,1\nd,1,2\n"), 4, op_names(t));
    FAIL("one file read for four ranks");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("{rank}"));
  }
  // per-rank files: the makespan of a repeat is the slowest rank's
  for (int q = 0; q < 4; ++q)
    dir.write("r" + std::to_string(q) + ".csv",
              "op,start_us,end_us\ng,100,110\nd,110," + std::to_string(120 + 10 * q) + "\n");
  const OpRecording rec = load_rank_recordings(dir.path() + "/r{rank}.csv", 4, op_names(t));
  CHECK(rec.ranks == 4);
  CHECK(rec.reps == 1);
  CHECK(rec.median_makespan_us() == Approx(50));    // rank 3: 100 .. 150
  CHECK(rec.median_duration_us("d") == Approx(25)); // 10, 20, 30, 40 pooled
  dir.write("r2.csv", "op,start_us,end_us\ng,0,1\nd,1,2\ng,0,1\nd,1,2\n");
  CHECK_THROWS_AS(load_rank_recordings(dir.path() + "/r{rank}.csv", 4, op_names(t)), InputError);
}

#include "calibrate/LeaveOneOut.hpp"
#include "calibrate/ProfileFit.hpp"
#include "calibrate/ProfileWriter.hpp"
#include "calibrate/ResultsStore.hpp"
#include "calibrate/VerifyCheck.hpp"
#include "config/HwProfileLoader.hpp"

#include <catch2/catch.hpp>

#include <set>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace dbosim::calib;

namespace {

const std::string kData = std::string(DBOSIM_SOURCE_DIR) + "/tests/data/calib/";

Measurement rec(std::string family, std::string variant, std::map<std::string, double> p, double us,
                std::map<std::string, double> extra = {})
{
  Measurement m;
  m.spec = MeasureSpec{std::move(family), std::move(variant), std::move(p)};
  summarize_samples(m, {us});
  m.extra = std::move(extra);
  return m;
}

Measurement env_record()
{
  Measurement e;
  e.spec = MeasureSpec{"env", "", {{"run", 1}}};
  e.info = {{"gpu_name", "NVIDIA H200 (synthetic records)"}, {"sm_count", "132"}, {"date", "2026-11-29T08:00:00Z"}};
  return e;
}

} // namespace

TEST_CASE("calib::fit_profile: SM-scaling speed is t(full)/t(S), median over the family's kernels", "[quick]")
{
  std::vector<Measurement> r = {env_record()};
  auto add                   = [&](const char* fam, double tokens, double sms, double us) {
    r.push_back(rec("sm_scaling", fam, {{"n", 64}, {"k", 64}, {"tokens", tokens}, {"sms", sms}}, us,
                                      {{"actual_sms", sms}, {"retile", 1}}));
  };
  add("gemm_bf16", 1, 132, 100);
  add("gemm_bf16", 1, 68, 200); // speed 0.5
  add("gemm_bf16", 2, 132, 100);
  add("gemm_bf16", 2, 68, 125); // speed 0.8
  add("gemm_fp8", 1, 132, 60);
  add("gemm_fp8", 1, 68, 100); // speed 0.6
  auto fit = fit_profile(r);
  REQUIRE(fit.sm_scaling.count("gemm"));
  const auto& c = fit.sm_scaling.at("gemm");
  REQUIRE(c.x == std::vector<double>{68, 132});
  CHECK(c.y[0] == Approx(0.6));
  CHECK(c.y[1] == 1.0);
  CHECK(c.retile);
  CHECK_THROWS_WITH(fit_profile({}), Catch::Contains("no environment record"));

  // a partial fit (no tables, no interference, no host costs) still makes a profile the loader accepts
  const std::string out = (std::filesystem::temp_directory_path() / "dbosim_partial_fit_test.yaml").string();
  WriterOptions opt;
  opt.base_profile = kData + "h200_datasheet.yaml";
  opt.raw_results  = "synthetic";
  write_profile(fit, opt, out);
  auto hw = dbosim::load_hw_profile(out);
  CHECK(hw.measured());
  CHECK(hw.tables.empty());
  CHECK(hw.interference.given().empty());
  CHECK(hw.launch_cpu_us == Approx(4.0)); // not measured: the datasheet's value stays
  CHECK(hw.sm_scaling.at("gemm").speed.y.front() == Approx(0.6));
  std::filesystem::remove(out);
}

TEST_CASE("calib::leave_one_out: exact on a linear table, measurable on a curved one", "[quick]")
{
  FitTable lin{"gemm_bf16", {{"n", 1}}, {1, 2, 4, 8, 16}, {10, 20, 40, 80, 160}, ""};
  auto s = leave_one_out({lin}, InterpKind::linear);
  REQUIRE(s.size() == 1);
  CHECK(s[0].points == 3);
  CHECK(s[0].median == Approx(0).margin(1e-12));
  FitTable sq{"rmsnorm", {{"hidden", 1}}, {1, 2, 3}, {1, 4, 9}, ""}; // y = x^2: predict 4 from (1,1),(3,9) -> 5
  auto q = leave_one_out({sq}, InterpKind::linear);
  CHECK(q[0].median == Approx(0.25));
  CHECK(interpolate({1, 4}, {1, 16}, 2, InterpKind::loglog) == Approx(4)); // a power law is exact in log-log
}

TEST_CASE("calib: the recorded H200 run fits into a profile the loader accepts", "[quick]")
{
  auto records = ResultsStore::read_file(kData + "h200_raw.jsonl");
  auto fit     = fit_profile(records);
  CHECK(fit.env.at("gpu_name") == "NVIDIA H200");
  for (const char* fam : {"gemm", "grouped_gemm", "attention"})
    CHECK(fit.sm_scaling.count(fam));
  CHECK(fit.interference.at("compute_with_comm").value >= 1.0);
  CHECK(fit.interference.at("compute_with_comm_partitioned").value >= 1.0);
  CHECK(fit.comm_kernel_gbps.x.size() >= 5);
  // per-shape SM tables: every zoo dense GEMM, BF16 and FP8, at 112 and 100 SMs
  CHECK(fit.sm_tables.size() == 22 * 2 * 2);

  const std::string out = (std::filesystem::temp_directory_path() / "dbosim_h200_fit_test.yaml").string();
  WriterOptions opt;
  opt.base_profile = kData + "h200_datasheet.yaml";
  opt.raw_results  = "tests/data/calib/h200_raw.jsonl";
  write_profile(fit, opt, out);
  auto hw = dbosim::load_hw_profile(out);
  CHECK(hw.measured());
  CHECK(hw.provenance.details.at("gpu_name") == "NVIDIA H200");
  CHECK(hw.sm_count == 132);
  CHECK(hw.sm_scaling.at("gemm").speed.y.back() == 1.0);
  CHECK(hw.comm_kernel_bytes_per_s_by_sms.y.front() > 1e9);
  CHECK(hw.sm_tables.size() == fit.sm_tables.size());
  double raw_us = 0;
  for (const auto& m : records)
    if (m.spec.key() == "gemm_bf16/k=7168,n=4096,tokens=4096")
      raw_us = m.us;
  REQUIRE(raw_us > 0);
  bool found = false;
  for (const auto& t : hw.tables)
    if (t.family == "gemm_bf16" && t.dims.at("n") == 4096 && t.dims.at("k") == 7168)
      for (size_t i = 0; i < t.us_by_tokens.x.size(); ++i)
        if (t.us_by_tokens.x[i] == 4096) { // within the writer's 4 significant digits of the raw median
          found = true;
          CHECK(t.us_by_tokens.y[i] == Approx(raw_us).epsilon(1e-3));
        }
  CHECK(found);
  CHECK(profile_yaml(fit, opt) == profile_yaml(fit, opt)); // deterministic
  opt.skip_families = {"mla_decode"};
  write_profile(fit, opt, out);
  auto skipped = dbosim::load_hw_profile(out);
  CHECK(skipped.tables.size() < hw.tables.size());
  for (const auto& t : skipped.tables)
    CHECK(t.family != "mla_decode");
  std::filesystem::remove(out);
}

TEST_CASE("calib::fit_profile: the mla_decode table takes FlashMLA's points, faster implementations elsewhere",
          "[quick]")
{
  std::vector<Measurement> r = {env_record()};
  auto add = [&](const char* fam, double tokens, double us, const char* impl, const char* measured_at) {
    Measurement m = rec(fam, "", {{"context", 4096}, {"heads", 128}, {"tokens", tokens}}, us);
    m.info        = {{"impl", impl}};
    if (*measured_at)
      m.info["measured_at"] = measured_at;
    r.push_back(m);
  };
  add("mla_decode_triton", 1, 10, "Triton", "");
  add("mla_decode", 1, 12, "cuBLAS", "");
  add("mla_decode_flashmla", 1, 15, "FlashMLA abc", "2026-12-02T18:00:00Z"); // slower, yet preferred
  add("mla_decode_triton", 64, 400, "Triton", "");
  add("mla_decode_flashmla", 64, 120, "FlashMLA abc", "2026-12-02T18:00:00Z");
  add("mla_decode_triton", 128, 800, "Triton", ""); // no FlashMLA point: the fastest of the others
  add("mla_decode", 128, 700, "cuBLAS", "");
  const auto fit = fit_profile(r);
  REQUIRE(fit.tables.size() == 1);
  const auto& t = fit.tables[0];
  CHECK(t.tokens == std::vector<double>{1, 64, 128});
  CHECK(t.us == std::vector<double>{15, 120, 700});
  CHECK(t.source.find("the preferred implementation where measured") != std::string::npos);
  CHECK(t.source.find("measured 2026-11-29") != std::string::npos); // mixed dates: the run's
  REQUIRE(fit.preferred_tables.count("mla_decode"));
  CHECK(fit.preferred_tables.at("mla_decode").points == 2);
  CHECK(fit.preferred_tables.at("mla_decode").total == 3);
  // FlashMLA alone: the table's date is its records' own
  r.pop_back();
  r.pop_back();
  const auto alone = fit_profile(r);
  REQUIRE(alone.tables.size() == 1);
  CHECK(alone.tables[0].source == "measured 2026-12-02 on NVIDIA H200 (synthetic records): FlashMLA abc; median of "
                                  "repeats, cold L2");
  // other tables keep the fastest implementation at every point
  CHECK(preferred_family("attention_prefill").empty());
  CHECK(preferred_family("mla_decode") == "mla_decode_flashmla");
}

TEST_CASE("calib::fit_profile: MLA's per-head product records make head_bmm_bf16 tables, one per heads, n and k",
          "[quick]")
{
  std::vector<Measurement> r = {env_record()};
  for (double heads : {16.0, 128.0})
    for (double tokens : {1.0, 64.0}) {
      Measurement m = rec("head_bmm_bf16", "", {{"heads", heads}, {"k", 128}, {"n", 512}, {"tokens", tokens}},
                          heads / 8 + tokens / 16);
      m.info        = {{"impl", "torch.bmm (cuBLAS strided-batched BF16) of x.transpose(0, 1)"}};
      r.push_back(m);
    }
  const auto fit = fit_profile(r);
  REQUIRE(fit.tables.size() == 2);
  for (const auto& t : fit.tables) {
    CHECK(t.family == "head_bmm_bf16");
    CHECK(t.tokens == std::vector<double>{1, 64});
    CHECK(t.us == std::vector<double>{t.dims.at("heads") / 8.0 + 1 / 16.0, t.dims.at("heads") / 8.0 + 4});
    CHECK(t.dims.at("n") == 512);
    CHECK(t.source.find("torch.bmm") != std::string::npos);
  }
}

TEST_CASE("calib: the committed h200 profile is the fit of the committed raw results", "[quick]")
{
  auto hw = dbosim::load_hw_profile(std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/h200.yaml");
  REQUIRE(hw.measured());
  CHECK(hw.provenance.details.at("raw_results") == "tests/data/calib/h200_raw.jsonl");
  auto fit = fit_profile(ResultsStore::read_file(kData + "h200_raw.jsonl"));
  // Families left out of the fit (--skip-family) are listed in provenance.tables_left_out, "a, b (why)".
  std::set<std::string> left_out;
  if (hw.provenance.details.count("tables_left_out")) {
    std::string list = hw.provenance.details.at("tables_left_out");
    list             = list.substr(0, list.find(" ("));
    for (size_t pos = 0; pos != std::string::npos;) {
      const size_t comma = list.find(", ", pos);
      left_out.insert(list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      pos = comma == std::string::npos ? comma : comma + 2;
    }
  }
  size_t kept = 0;
  for (const auto& t : fit.tables)
    kept += left_out.count(t.family) == 0;
  CHECK(left_out.size() <= 1);
  CHECK(hw.tables.size() == kept);
  CHECK(hw.sm_tables.size() == fit.sm_tables.size());
  for (const auto& t : hw.tables)
    CHECK(left_out.count(t.family) == 0);
  // the acceptance check, as recorded: the fresh pass is within 10% of the fitted points
  auto rows = compare_verification(ResultsStore::read_file(kData + "h200_raw.jsonl"),
                                   ResultsStore::read_file(kData + "h200_verify.jsonl"));
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows)
    CHECK(std::abs(r.rel_diff) < 0.10);
}

TEST_CASE("calib: refit replays the fit recorded in the shipped h200 profile, byte for byte", "[quick]")
{
  const std::string src     = DBOSIM_SOURCE_DIR;
  const std::string profile = src + "/hwprofiles/h200.yaml";
  const RefitInputs in      = refit_inputs(profile, src);
  CHECK(in.options.raw_results == "tests/data/calib/h200_raw.jsonl"); // recorded relative to the repository
  CHECK(in.options.skip_families.empty()); // mla_decode is FlashMLA's, measured (kernels/flashmla_decode.py)
  std::ifstream file(profile);
  const std::string shipped((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(profile_yaml(fit_profile(in.records), in.options) == shipped);
  // the profile names the command that made it
  CHECK(shipped.find("fit_command: \"dbosim-calibrate fit --raw tests/data/calib/h200_raw.jsonl") != std::string::npos);
  // a profile that does not record its fit says which key is missing
  CHECK_THROWS_WITH(recorded_fit(kData + "h200_datasheet.yaml"), Catch::Contains("provenance.raw_results"));
}

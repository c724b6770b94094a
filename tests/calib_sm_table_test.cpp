#include "calibrate/ProfileFit.hpp"
#include "calibrate/SmTableFit.hpp"
#include "calibrate/SmTableLoo.hpp"
#include "calibrate/SuitePlan.hpp"

#include <catch2/catch.hpp>

using namespace dbosim::calib;

namespace {

Measurement env_record(int run, const char* date)
{
  Measurement e;
  e.spec = MeasureSpec{"env", "", {{"run", run}}};
  e.info = {
      {"gpu_name", "NVIDIA H200 (synthetic records)"}, {"sm_count", "132"}, {"date", date}, {"git_commit", "abc"}};
  return e;
}

Measurement point(const char* family, int n, double tokens, int sms, double us,
                  const std::map<std::string, double>& timing = {})
{
  Measurement m;
  m.spec = MeasureSpec{"sm_table", family, {{"n", n}, {"k", 512}, {"tokens", tokens}, {"sms", sms}}};
  m.spec.params.insert(timing.begin(), timing.end());
  summarize_samples(m, {us});
  m.extra = {{"actual_sms", sms}, {"green", sms < 132 ? 1 : 0}, {"retile", 1}};
  return m;
}

} // namespace

TEST_CASE("calib::sm_table_plan: every zoo dense GEMM, both dtypes, full GPU then the two DBO partitions", "[quick]")
{
  auto plan = sm_table_plan(132);
  CHECK(sm_table_sms(132) == std::vector<int>{112, 100});
  CHECK(plan.size() == zoo_gemm_shapes().size() * 2 * sm_table_tokens().size() * 3);
  // the timing is a parameter of every point (validate/testbed/diag/README.md): its points have keys of their own
  const std::string t = "settle_ms=" + std::to_string(sm_table_settle_ms);
  CHECK(plan[0].key() == "sm_table/gemm_bf16/k=7168,n=4096," + t + ",sms=132,tokens=16");
  CHECK(plan[1].key() == "sm_table/gemm_bf16/k=7168,n=4096," + t + ",sms=112,tokens=16");
  CHECK(plan[2].key() == "sm_table/gemm_bf16/k=7168,n=4096," + t + ",sms=100,tokens=16");
  CHECK(sm_table_plan(132, {})[0].key() == "sm_table/gemm_bf16/k=7168,n=4096,sms=132,tokens=16"); // cold L2
  CHECK(sm_table_plan(132, {{"rest_ms", 30}})[0].key() ==
        "sm_table/gemm_bf16/k=7168,n=4096,rest_ms=30,sms=132,tokens=16");
  // part of the full suite only
  auto has_table = [](const std::vector<MeasureSpec>& p) {
    for (const auto& s : p)
      if (s.family == "sm_table")
        return true;
    return false;
  };
  CHECK(has_table(build_plan(SuiteSize::full, 132)));
  CHECK_FALSE(has_table(build_plan(SuiteSize::quick, 132)));
}

TEST_CASE("calib::fit_sm_tables: speed t(full)/t(S) per token count, the median curves ignore these records", "[quick]")
{
  std::vector<Measurement> r = {env_record(1, "2026-11-29T08:00:00Z"), env_record(2, "2026-11-30T09:00:00Z")};
  r.push_back(point("gemm_bf16", 64, 16, 132, 10));
  r.push_back(point("gemm_bf16", 64, 16, 112, 20)); // 0.5
  r.push_back(point("gemm_bf16", 64, 64, 132, 20));
  r.push_back(point("gemm_bf16", 64, 64, 112, 25));  // 0.8
  r.push_back(point("gemm_bf16", 64, 256, 112, 30)); // no full-GPU point: dropped
  r.push_back(point("gemm_bf16", 64, 16, 100, 30));  // one point at 100 SMs: no table
  r.push_back(point("gemm_fp8", 64, 16, 112, 30));   // no full-GPU point at all
  auto tables = fit_sm_tables(r, 132);
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].family == "gemm_bf16");
  CHECK(tables[0].dims == std::map<std::string, int>{{"n", 64}, {"k", 512}});
  CHECK(tables[0].sms == 112);
  CHECK(tables[0].tokens == std::vector<double>{16, 64});
  CHECK(tables[0].speed[0] == Approx(0.5));
  CHECK(tables[0].speed[1] == Approx(0.8));
  CHECK(tables[0].source.find("measured 2026-11-30") == 0); // the env record before the points (run 2)
  auto fit = fit_profile(r);
  CHECK(fit.sm_tables.size() == 1);
  CHECK(fit.sm_scaling.empty());
  CHECK(fit.tables.empty());
}

TEST_CASE("calib::fit_sm_tables: a shape's tables come from the timing of its last records", "[quick]")
{
  std::vector<Measurement> r = {env_record(1, "2026-11-29T08:00:00Z")};
  for (int n : {64, 128}) { // run 1: cold L2, both shapes
    r.push_back(point("gemm_bf16", n, 16, 132, 10));
    r.push_back(point("gemm_bf16", n, 16, 112, 20));
    r.push_back(point("gemm_bf16", n, 64, 132, 20));
    r.push_back(point("gemm_bf16", n, 64, 112, 40));
  }
  r.push_back(env_record(2, "2026-12-02T11:00:00Z"));
  const std::map<std::string, double> rest = {{"rest_ms", 30}};
  r.push_back(point("gemm_bf16", 64, 16, 132, 10, rest)); // run 2: the rested timing, shape n=64 only
  r.push_back(point("gemm_bf16", 64, 16, 112, 12.5, rest));
  r.push_back(point("gemm_bf16", 64, 64, 132, 20, rest));
  r.back().extra["sm_clock_med_mhz"] = 1980;
  r.push_back(point("gemm_bf16", 64, 64, 112, 25, rest)); // 0.8
  r.back().extra["sm_clock_med_mhz"] = 1965;
  auto tables                        = fit_sm_tables(r, 132);
  REQUIRE(tables.size() == 2);
  CHECK(tables[0].dims.at("n") == 64); // rested: the cold points of run 1 left out
  CHECK(tables[0].speed == std::vector<double>{0.8, 0.8});
  CHECK(tables[0].source.find("measured 2026-12-02") == 0);
  CHECK(tables[0].source.find("after the GPU idled 30 ms") != std::string::npos);
  CHECK(tables[0].source.find("median SM clock 1980 MHz at 132 SMs, 1965 at the partitions") != std::string::npos);
  CHECK(tables[1].dims.at("n") == 128); // cold L2 (run 1 only)
  CHECK(tables[1].speed == std::vector<double>{0.5, 0.5});
  CHECK(tables[1].source.find("measured 2026-11-29") == 0);
  CHECK(tables[1].source.substr(tables[1].source.size() - 7) == "cold L2");
  // a settled run appended after it replaces the rested one
  r.push_back(point("gemm_bf16", 64, 16, 132, 10, {{"settle_ms", 100}}));
  r.push_back(point("gemm_bf16", 64, 16, 112, 10, {{"settle_ms", 100}}));
  r.push_back(point("gemm_bf16", 64, 64, 132, 20, {{"settle_ms", 100}}));
  r.push_back(point("gemm_bf16", 64, 64, 112, 20, {{"settle_ms", 100}}));
  tables = fit_sm_tables(r, 132);
  REQUIRE(tables.size() == 2);
  CHECK(tables[0].speed == std::vector<double>{1.0, 1.0});
  CHECK(tables[0].source.find("after 100 ms of back-to-back launches") != std::string::npos);
}

TEST_CASE("calib::sm_table_loo: leave one token count out, vs the family median curve, in closed form", "[quick]")
{
  FitSmTable t{"gemm_bf16", {{"n", 64}, {"k", 512}}, 112, {16, 64, 256}, {0.5, 0.8, 0.9}, ""};
  std::map<std::string, FitCurve> curves;
  curves["gemm"] = FitCurve{{100, 112, 132}, {0.6, 0.7, 1.0}, true, ""};
  auto rows      = sm_table_loo({t}, curves);
  REQUIRE(rows.size() == 2);
  // left out: 16 -> clamped to 0.8 (error 0.6); 64 -> 0.5 + 48/240 x 0.4 = 0.58 (0.275); 256 -> 0.8 (0.111)
  CHECK(rows[0].model == "per-shape table");
  CHECK(rows[0].sms == 112);
  CHECK(rows[0].points == 3);
  CHECK(rows[0].median == Approx(0.275));
  CHECK(rows[0].max == Approx(0.6));
  CHECK(rows[0].mean == Approx((0.6 + 0.275 + 0.1 / 0.9) / 3));
  CHECK(rows[0].worst == "gemm_bf16[n=64,k=512]@16");
  // the curve says 0.7 at 112 SMs: errors 0.4, 0.125, 0.222
  CHECK(rows[1].model == "median curve");
  CHECK(rows[1].median == Approx(0.2 / 0.9));
  CHECK(rows[0].better == 1); // only at 256 tokens
  CHECK(rows[1].better == 2);
  CHECK(format_sm_table_loo_report(rows).find("1 of 3") != std::string::npos);
  // an SM count the curve lacks, or no gemm curve: no rows
  t.sms = 108;
  CHECK(sm_table_loo({t}, curves).empty());
  CHECK(sm_table_loo({t}, {}).empty());
}

#include "calibrate/ResultsStore.hpp"
#include "calibrate/SmScalingLoo.hpp"

#include <catch2/catch.hpp>

using namespace dbosim::calib;

namespace {

Measurement sm_rec(const char* variant, std::map<std::string, double> dims, int sms, double us)
{
  Measurement m;
  dims["sms"] = sms;
  m.spec      = MeasureSpec{"sm_scaling", variant, dims};
  summarize_samples(m, {us});
  m.extra = {{"actual_sms", sms}, {"retile", 1}};
  return m;
}

SmKernel gemm(double tokens, double n, std::map<int, double> speed)
{
  return SmKernel{"gemm", "gemm_bf16", {{"tokens", tokens}, {"n", n}, {"k", 1024}}, std::move(speed)};
}

const SmLooRow& row(const std::vector<SmLooRow>& rows, const std::string& family, const std::string& model)
{
  for (const auto& r : rows)
    if (r.family == family && r.model == model)
      return r;
  FAIL("no row " << family << " / " << model);
  return rows.front();
}

} // namespace

TEST_CASE("calib::sm_scaling: tiles, wave factor and compute share in closed form", "[quick]")
{
  SmKernel k{"grouped_gemm", "grouped_gemm_bf16", {{"experts", 2}, {"tokens", 300}, {"n", 1000}, {"k", 512}}, {}};
  CHECK(gemm_tiles(k, 128, 256) == 2 * 3 * 4);
  CHECK(wave_factor(512, 100, 132) == Approx(4.0 / 6.0)); // 4 waves on 132 SMs, 6 on 100
  CHECK(wave_factor(56, 100, 132) == 1.0);                // one wave on both
  CHECK(wave_factor(133, 132, 132) == 1.0);
  // tc = 2*2*300*1000*512 / 1e12; tm = 2*(1000*512*2 + 300*512*2 + 300*1000*2) / 1e9
  const double tc = 2.0 * 2 * 300 * 1000 * 512 / 1e12,
               tm = 2.0 * (1000 * 512 * 2 + 300 * 512 * 2 + 300 * 1000 * 2) / 1e9;
  CHECK(compute_share(k, {1e12, 2e12, 1e9}) == Approx(tc / (tc + tm)));
  k.variant        = "grouped_gemm_fp8"; // FP8 peak and 1-byte inputs
  const double tc8 = tc / 2, tm8 = 2.0 * (1000 * 512 + 300 * 512 + 300 * 1000 * 2) / 1e9;
  CHECK(compute_share(k, {1e12, 2e12, 1e9}) == Approx(tc8 / (tc8 + tm8)));
}

TEST_CASE("calib::sm_scaling_kernels: speed is t(full)/t(S) per kernel, kernels without a full-GPU point dropped",
          "[quick]")
{
  std::vector<Measurement> r = {sm_rec("gemm_bf16", {{"n", 64}, {"k", 64}, {"tokens", 8}}, 132, 100),
                                sm_rec("gemm_bf16", {{"n", 64}, {"k", 64}, {"tokens", 8}}, 66, 250),
                                sm_rec("gemm_bf16", {{"n", 64}, {"k", 64}, {"tokens", 16}}, 66, 250),
                                sm_rec("rmsnorm", {{"hidden", 64}, {"tokens", 8}}, 132, 10),
                                sm_rec("rmsnorm", {{"hidden", 64}, {"tokens", 8}}, 100, 20)};
  auto ks                    = sm_scaling_kernels(r, 132);
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].family == "gemm");
  CHECK(ks[0].dims.at("tokens") == 8);
  CHECK(ks[0].speed == std::map<int, double>{{66, 0.4}});
  CHECK(ks[1].family == "memory");
  CHECK(ks[1].speed.at(100) == Approx(0.5));
}

TEST_CASE("calib::sm_scaling_loo: kernels that follow wave quantization are predicted exactly by it, not by a median",
          "[quick]")
{
  // made-up kernels whose speed is exactly the wave factor of 128x128 tiles on 132 SMs
  std::vector<SmKernel> ks;
  for (auto [tokens, n] : {std::pair{256.0, 7168.0}, {4096.0, 4096.0}, {1024.0, 24576.0}, {16.0, 4096.0}}) {
    SmKernel k = gemm(tokens, n, {});
    for (int sms : {68, 100, 116})
      k.speed[sms] = wave_factor(gemm_tiles(k, 128, 128), sms, 132);
    ks.push_back(k);
  }
  const auto rows = sm_scaling_loo(ks, 132, {});
  CHECK(rows.size() == 2); // no rates, no memory kernels: no roofline blend
  const auto& wave = row(rows, "gemm", "wave quantization");
  CHECK(wave.kernels == 4);
  CHECK(wave.points == 12);
  CHECK(wave.max < 1e-12);
  CHECK(row(rows, "gemm", "median curve").max > 0.2);
  REQUIRE(wave.kernel_mean.size() == 4);
  const auto& med  = row(rows, "gemm", "median curve").kernel_mean;
  const int better = static_cast<int>((med[0] > 0) + (med[1] > 0) + (med[2] > 0) + (med[3] > 0));
  CHECK_THAT(format_sm_loo_report(rows), Catch::Contains(std::to_string(better) + " of 4"));
  CHECK(wave.kernel_names[1] == "gemm_bf16{k=1024 n=4096 tokens=4096}");
  CHECK_THAT(format_sm_loo_report(rows), Catch::Contains("gemm_bf16{k=1024 n=4096 tokens=4096}"));
}

TEST_CASE("calib::sm_scaling_loo: the roofline blend is exact when compute follows one curve and memory another",
          "[quick]")
{
  const SmRates rates{1e15, 2e15, 4e12};
  const std::map<int, double> gm = {{68, 0.8}, {100, 0.9}}, gc = {{68, 0.5}, {100, 0.75}};
  std::vector<SmKernel> ks;
  for (double tokens : {16.0, 256.0, 1024.0, 8192.0}) {
    SmKernel k     = gemm(tokens, 4096, {});
    const double f = compute_share(k, rates);
    for (auto [sms, c] : gc)
      k.speed[sms] = 1 / (f / c + (1 - f) / gm.at(sms));
    ks.push_back(k);
  }
  ks.push_back(SmKernel{"memory", "rmsnorm", {{"hidden", 64}, {"tokens", 8}}, gm});
  const auto rows = sm_scaling_loo(ks, 132, rates);
  CHECK(row(rows, "gemm", "roofline blend").max < 1e-9);
  CHECK(row(rows, "gemm", "median curve").max > 0.05);
}

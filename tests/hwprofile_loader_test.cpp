#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "models/OpTables.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using dbosim::InputError;
using dbosim::load_hw_profile;

TEST_CASE("config::HwProfileLoader: every shipped profile loads with a source for each number", "[quick]")
{
  for (const auto& name : dbosim::list_hw_profiles()) {
    INFO(name);
    const auto hw = load_hw_profile(name);
    CHECK(hw.name == name);
    CHECK(hw.sm_count > 0);
    CHECK(hw.peak_flops_per_s.at(dbosim::models::DType::bf16) > 1e14);
    CHECK(hw.hbm_bytes_per_s > 1e12);
    CHECK(hw.sources.count("hbm_bandwidth") == 1);
    CHECK(hw.sources.count("host.launch_cpu") == 1);
    for (const auto& [key, src] : hw.sources) {
      INFO(key);
      CHECK_FALSE(src.empty());
    }
  }
}

TEST_CASE("config::HwProfileLoader: unit strings and plain numbers", "[quick]")
{
  const auto h200 = load_hw_profile("h200");
  CHECK(h200.hbm_bytes_per_s == Approx(4.8e12));
  CHECK(h200.nvlink_bytes_per_s == Approx(450e9));
  CHECK(h200.nic_bytes_per_s == Approx(50e9)); // 400 Gb/s
  CHECK(h200.nvlink_latency_us == Approx(1.0));
  CHECK(h200.peak_flops_per_s.at(dbosim::models::DType::fp8) == Approx(1979e12));
}

TEST_CASE("config::HwProfileLoader: broken profiles are rejected with file, line and key", "[quick]")
{
  std::stringstream text;
  // the datasheet H200 profile, kept verbatim by calibrate/ (hwprofiles/h200.yaml is the measured one now)
  text << std::ifstream(std::string(DBOSIM_SOURCE_DIR) + "/tests/data/calib/h200_datasheet.yaml").rdbuf();
  const std::string good = text.str();
  dbosim::test::TempDir dir;
  auto error_of = [&](const std::string& from, const std::string& to) {
    std::string bad = good;
    auto pos        = bad.find(from);
    REQUIRE(pos != std::string::npos);
    bad.replace(pos, from.size(), to);
    const std::string path = dir.write("bad.yaml", bad);
    try {
      load_hw_profile(path);
    } catch (const InputError& e) {
      return std::string(e.what()).substr(path.size());
    }
    FAIL("profile loaded but should not");
    return std::string();
  };
  CHECK(error_of("value: \"4.8TBps\"", "value: \"4.8 parsecs\"")
            .find("hbm_bandwidth.value: '4.8 parsecs' has unknown unit") != std::string::npos);
  CHECK(error_of("value: \"4.8TBps\"", "value: .nan").find("hbm_bandwidth.value: '.nan' is not a finite number") !=
        std::string::npos);
  CHECK(error_of("kind: datasheet", "kind: measured").find("provenance.gpu_name: a measured profile must record") !=
        std::string::npos);
  CHECK(error_of("kind: datasheet", "kind: derived").find("provenance.parent: a derived profile must record") !=
        std::string::npos);
  CHECK(error_of("kind: datasheet", "kind: estimated").find("valid: datasheet, measured, derived") !=
        std::string::npos);
  CHECK(error_of("sm_count:           {value: 132,", "sm_count:           {value: 0,")
            .find("sm_count.value: 0 is out of range") != std::string::npos);
}

TEST_CASE("config::HwProfileLoader: the measured H200's FP8 expert GEMMs stream their weights at 60% of HBM or more",
          "[quick]")
{
  // DeepSeek-V3 routed experts (gate+up 4096x7168, down 7168x2048, FP8) at 16 and 32 experts per rank (EP 16 and 8)
  // and 1-32 tokens per expert: what a decode step's MoE runs. The table must name the implementation that measured
  // it. (At 8 experts the 117 MB down projection reads 2.8 TB/s, 58%: DeepGEMM's fixed cost shows on smaller GEMMs.)
  const auto hw = load_hw_profile("h200");
  for (const auto& [n, k] : std::vector<std::pair<int, int>>{{4096, 7168}, {7168, 2048}})
    for (int experts : {16, 32}) {
      const dbosim::models::OpTable* t =
          dbosim::models::find_table(hw, "grouped_gemm_fp8", {{"experts", experts}, {"n", n}, {"k", k}});
      INFO("experts " << experts << " n " << n << " k " << k);
      REQUIRE(t != nullptr);
      CHECK(t->us_by_tokens.source.find("DeepGEMM") != std::string::npos);
      for (int tokens : {1, 2, 4, 8, 16, 32}) {
        const double us           = dbosim::models::table_us(t->us_by_tokens, tokens);
        const double weight_bytes = double(experts) * n * k; // FP8: one byte per weight
        INFO("tokens " << tokens << ": " << us << " us");
        CHECK(weight_bytes / (us * 1e-6) >= 0.6 * hw.hbm_bytes_per_s);
      }
    }
}

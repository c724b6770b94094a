#include "models/KernelCost.hpp"
#include "models/OpCost.hpp"
#include "models/OpTables.hpp"
#include "opcost_test_support.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace dbosim::models;

namespace {

/** A made-up profile: the gemm family curve {66: 0.55, 100: 0.8, 132: 1} and one per-shape table for gemm_bf16
 *  [n=4096, k=7168] at 112 SMs: speed 0.5 at 16 tokens, 0.9 at 256. */
HwProfile profile_with_table()
{
  HwProfile hw = dbosim::test::h200_like();
  SmScaling s;
  s.speed.x             = {66, 100, 132};
  s.speed.y             = {0.55, 0.8, 1.0};
  hw.sm_scaling["gemm"] = s;
  SmTable t;
  t.family            = "gemm_bf16";
  t.dims              = {{"n", 4096}, {"k", 7168}};
  t.sms               = 112;
  t.speed_by_tokens.x = {16, 256};
  t.speed_by_tokens.y = {0.5, 0.9};
  hw.sm_tables.push_back(t);
  return hw;
}

/** Two kernels: 60 us of gemm_bf16 [4096 x 7168] and 40 us of gemm_bf16 [2048 x 7168], both at `tokens`. */
OpCost two_gemms(double tokens)
{
  OpCost c;
  c.kind        = OpKind::A0;
  c.sm_family   = "gemm";
  c.duration_us = 100;
  c.parts       = {{60, "gemm_bf16", {{"n", 4096}, {"k", 7168}}, tokens},
                   {40, "gemm_bf16", {{"n", 2048}, {"k", 7168}}, tokens}};
  return c;
}

} // namespace

TEST_CASE("models::duration_on_sms_us: a per-shape SM table where measured, the family curve elsewhere", "[quick]")
{
  const HwProfile hw = profile_with_table();
  bool linear        = true;
  SECTION("the kernel with a table at these SMs takes its speed; the other the family curve")
  {
    // 136 tokens: halfway 16..256, speed 0.7 -> 60/0.7; curve at 112 SMs: 0.8 + 12/32 x 0.2 = 0.875 -> 40/0.875
    CHECK(duration_on_sms_us(hw, two_gemms(136), 112, &linear) == Approx(60 / 0.7 + 40 / 0.875));
    CHECK_FALSE(linear);
  }
  SECTION("speed is clamped at both ends of the tokens")
  {
    CHECK(duration_on_sms_us(hw, two_gemms(4), 112) == Approx(60 / 0.5 + 40 / 0.875));
    CHECK(duration_on_sms_us(hw, two_gemms(4096), 112) == Approx(60 / 0.9 + 40 / 0.875));
  }
  SECTION("no table at this SM count: the whole op by the family curve, as without tables")
  {
    CHECK(duration_on_sms_us(hw, two_gemms(136), 100) == Approx(125)); // speed 0.8
    CHECK(duration_on_sms_us(hw, two_gemms(136), 116) == Approx(100 / 0.9));
  }
  SECTION("a table for other dims or another family is not used")
  {
    OpCost c = two_gemms(136);
    c.parts  = {{60, "gemm_fp8", {{"n", 4096}, {"k", 7168}}, 136}, {40, "gemm_bf16", {{"n", 4096}, {"k", 512}}, 136}};
    CHECK(duration_on_sms_us(hw, c, 112) == Approx(100 / 0.875));
  }
  SECTION("no family curve: the op's other kernels fall back to the SM fraction, flagged")
  {
    HwProfile bare = hw;
    bare.sm_scaling.clear();
    CHECK(duration_on_sms_us(bare, two_gemms(136), 112, &linear) == Approx(60 / 0.7 + 40 * 132.0 / 112));
    CHECK(linear);
  }
  SECTION("layer_costs records each kernel of an op with its table key")
  {
    KernelWork k = gemm_kernel("o_proj", 136, 4096, 7168, DType::bf16);
    CHECK(k.table_family == "gemm_bf16");
    CHECK(k.table_dims == std::map<std::string, int>{{"n", 4096}, {"k", 7168}});
    CHECK(k.table_tokens == 136);
  }
}

TEST_CASE("models::speed_at_tokens and find_sm_table", "[quick]")
{
  const HwProfile hw = profile_with_table();
  CHECK(find_sm_table(hw, "gemm_bf16", {{"n", 4096}, {"k", 7168}}, 112) != nullptr);
  CHECK(find_sm_table(hw, "gemm_bf16", {{"n", 4096}, {"k", 7168}}, 100) == nullptr);
  CHECK(find_sm_table(hw, "gemm_fp8", {{"n", 4096}, {"k", 7168}}, 112) == nullptr);
  const Curve& c = hw.sm_tables[0].speed_by_tokens;
  CHECK(speed_at_tokens(c, 16) == 0.5);
  CHECK(speed_at_tokens(c, 76) == Approx(0.6));
  Curve bad = c;
  bad.y[0]  = 0;
  CHECK_THROWS_AS(speed_at_tokens(bad, 16), std::invalid_argument);
  CHECK_THROWS_AS(speed_at_tokens(Curve{}, 16), std::invalid_argument);
}

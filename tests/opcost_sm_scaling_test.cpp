#include "models/OpCost.hpp"
#include "opcost_test_support.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace dbosim::models;

namespace {
OpCost op(const std::string& family, double us)
{
  OpCost c;
  c.kind        = OpKind::MLP;
  c.sm_family   = family;
  c.duration_us = us;
  return c;
}
} // namespace

TEST_CASE("models::duration_on_sms_us: SM-scaling curve and linear fallback", "[quick]")
{
  HwProfile hw = dbosim::test::h200_like();
  SmScaling s;
  s.speed.x             = {66, 100, 132};
  s.speed.y             = {0.55, 0.8, 1.0};
  hw.sm_scaling["gemm"] = s;
  bool linear           = true;

  SECTION("on the curve")
  {
    CHECK(duration_on_sms_us(hw, op("gemm", 100), 132, &linear) == Approx(100));
    CHECK_FALSE(linear);
    CHECK(duration_on_sms_us(hw, op("gemm", 100), 100) == Approx(125)); // speed 0.8
    // 116 SMs: halfway from 100 to 132: speed 0.9 -> 111.1 us
    CHECK(duration_on_sms_us(hw, op("gemm", 100), 116) == Approx(100 / 0.9));
    // below the first point the speed falls with the SMs: 33 SMs -> 0.55 x 33/66 = 0.275
    CHECK(duration_on_sms_us(hw, op("gemm", 100), 33) == Approx(100 / 0.275));
  }
  SECTION("no curve for the family: linear in SMs, flagged")
  {
    // 112 of 132 SMs: 100 x 132 / 112 = 117.857 us
    CHECK(duration_on_sms_us(hw, op("attention", 100), 112, &linear) == Approx(117.857).epsilon(1e-4));
    CHECK(linear);
  }
  SECTION("all-to-all ops are not scaled here")
  {
    OpCost d = op("", 40);
    d.kind   = OpKind::D;
    CHECK(duration_on_sms_us(hw, d, 20, &linear) == 40);
    CHECK_FALSE(linear);
  }
  SECTION("SM counts outside the GPU are errors")
  {
    CHECK_THROWS_AS(duration_on_sms_us(hw, op("gemm", 100), 0), std::invalid_argument);
    CHECK_THROWS_AS(duration_on_sms_us(hw, op("gemm", 100), 133), std::invalid_argument);
  }
}

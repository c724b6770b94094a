#include "models/CostGuards.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace dbosim::models;

namespace {
HwProfile guard_profile()
{
  HwProfile hw;
  hw.name                          = "guard";
  hw.sm_count                      = 132;
  hw.peak_flops_per_s[DType::bf16] = 1e15;
  hw.peak_flops_per_s[DType::fp8]  = 2e15;
  hw.hbm_bytes_per_s               = 4e12;
  hw.nvlink_bytes_per_s            = 450e9;
  hw.nic_bytes_per_s               = 50e9;
  return hw;
}
OpCost op(OpKind kind, double flops, double bytes, double us)
{
  OpCost c;
  c.kind        = kind;
  c.flops       = flops;
  c.bytes       = bytes;
  c.duration_us = us;
  c.method      = "test";
  return c;
}
} // namespace

TEST_CASE("models::CostGuards: physical bounds on op costs", "[quick]")
{
  const HwProfile hw = guard_profile();
  SECTION("a plausible op passes")
  {
    CHECK_NOTHROW(check_op_bounds(op(OpKind::MLP, 1e12, 1e9, 1000), hw)); // 1 PF/s on a 2 PF/s peak
    CHECK_NOTHROW(check_op_bounds(op(OpKind::D, 0, 4.5e6, 10), hw));      // exactly the NVLink rate
  }
  SECTION("faster than the highest peak")
  {
    CHECK_THROWS_WITH(check_op_bounds(op(OpKind::A1, 3e12, 1e6, 1000), hw),
                      Catch::Contains("op A1 violates a physical bound") &&
                          Catch::Contains("exceeds the profile's peak"));
  }
  SECTION("a transfer above the fastest link")
  {
    CHECK_THROWS_WITH(check_op_bounds(op(OpKind::C, 0, 1e7, 10), hw),
                      Catch::Contains("op C") && Catch::Contains("exceeds the fastest link"));
  }
  SECTION("NaN, infinity, negative and zero-duration work")
  {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(check_op_bounds(op(OpKind::S, nan, 1, 1), hw), CostBoundViolation);
    CHECK_THROWS_AS(check_op_bounds(op(OpKind::S, 1, 1, std::numeric_limits<double>::infinity()), hw),
                    CostBoundViolation);
    CHECK_THROWS_AS(check_op_bounds(op(OpKind::S, 1, -1, 1), hw), CostBoundViolation);
    CHECK_THROWS_WITH(check_op_bounds(op(OpKind::A0, 1e9, 1e6, 0), hw), Catch::Contains("work with zero duration"));
  }
}

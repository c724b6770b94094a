#include "models/KernelCost.hpp"
#include "models/OpTables.hpp"
#include "opcost_test_support.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace dbosim::models;

namespace {
// A made-up measured table: 16 tokens 10 us, 64 tokens 20 us, 256 tokens 50 us.
Curve table_curve()
{
  Curve c;
  c.x = {16, 64, 256};
  c.y = {10, 20, 50};
  return c;
}
} // namespace

TEST_CASE("models::OpTables: interpolation on tokens", "[quick]")
{
  const Curve c   = table_curve();
  TableLookup how = TableLookup::interpolated;

  SECTION("exact at the measured points")
  {
    CHECK(table_us(c, 16, &how) == 10);
    CHECK(how == TableLookup::exact);
    CHECK(table_us(c, 64) == 20);
    CHECK(table_us(c, 256, &how) == 50);
    CHECK(how == TableLookup::exact);
  }
  SECTION("linear between points")
  {
    // 40 is halfway from 16 to 64: 10 + 0.5 x (20 - 10) = 15
    CHECK(table_us(c, 40, &how) == Approx(15));
    CHECK(how == TableLookup::interpolated);
    // 160 is halfway from 64 to 256: 20 + 0.5 x (50 - 20) = 35
    CHECK(table_us(c, 160) == Approx(35));
  }
  SECTION("clamped below the first point")
  {
    CHECK(table_us(c, 1, &how) == 10);
    CHECK(how == TableLookup::clamped);
    CHECK(table_us(c, 0) == 10);
  }
  SECTION("linear throughput extrapolation above the last point")
  {
    // last point: 256 tokens in 50 us = 5.12 tokens/us; 512 tokens -> 100 us; 1000 -> 195.3125 us
    CHECK(table_us(c, 512, &how) == Approx(100));
    CHECK(how == TableLookup::extrapolated);
    CHECK(table_us(c, 1000) == Approx(195.3125));
  }
  SECTION("broken curves are rejected")
  {
    Curve bad = c;
    bad.x     = {16, 16, 256};
    CHECK_THROWS_AS(table_us(bad, 20), std::invalid_argument);
    CHECK_THROWS_AS(table_us(Curve{}, 20), std::invalid_argument);
    CHECK_THROWS_AS(table_us(c, -1), std::invalid_argument);
  }
}

TEST_CASE("models::KernelCost: a measured table replaces the roofline for its family and dims", "[quick]")
{
  HwProfile hw = dbosim::test::h200_like();
  OpTable t;
  t.family       = "gemm_fp8";
  t.dims         = {{"n", 4096}, {"k", 7168}};
  t.us_by_tokens = table_curve();
  hw.tables.push_back(t);

  const KernelTime hit = kernel_time(hw, gemm_kernel("gate_up", 40, 4096, 7168, DType::fp8));
  CHECK(hit.bound == Bound::table);
  CHECK(hit.us == Approx(15));
  CHECK(hit.method.find("gemm_fp8[k=7168,n=4096]") != std::string::npos);

  // other dims or dtype: no table, roofline
  const KernelTime other_dims = kernel_time(hw, gemm_kernel("down", 40, 7168, 2048, DType::fp8));
  CHECK(other_dims.bound != Bound::table);
  const KernelTime other_dtype = kernel_time(hw, gemm_kernel("gate_up", 40, 4096, 7168, DType::bf16));
  CHECK(other_dtype.bound != Bound::table);
  CHECK(find_table(hw, "gemm_fp8", {{"n", 4096}, {"k", 7168}}) != nullptr);
  CHECK(find_table(hw, "gemm_fp8", {{"n", 4096}}) == nullptr);
}

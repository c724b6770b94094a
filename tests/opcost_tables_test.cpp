#include "config/HwProfileLoader.hpp"
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

/** Adds a made-up measured table of `family` at `dims` to `hw`. */
void add_table(HwProfile& hw, const std::string& family, const std::map<std::string, int>& dims, const Curve& us)
{
  OpTable t;
  t.family       = family;
  t.dims         = dims;
  t.us_by_tokens = us;
  hw.tables.push_back(t);
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
  add_table(hw, "gemm_fp8", {{"n", 4096}, {"k", 7168}}, table_curve());

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

TEST_CASE("models::KernelCost: a dim between two tables (MLA decode's context) is linear between them", "[quick]")
{
  HwProfile hw = dbosim::test::h200_like();
  for (int ctx : {1024, 2048}) // 1024: 10.24 / 20.48 us, 2048: 20.48 / 40.96 us
    add_table(hw, "mla_decode", {{"context", ctx}, {"heads", 128}}, Curve{{1, 64}, {ctx / 100.0, ctx / 50.0}, ""});
  // same family, other heads: never used for 128 heads
  add_table(hw, "mla_decode", {{"context", 1536}, {"heads", 16}}, Curve{{1, 64}, {1, 1}, ""});
  auto mla = [](int ctx, double tokens) {
    KernelWork k;
    k.name             = "mla_decode";
    k.efficiency       = Efficiency::attention;
    k.flops            = 1e9;
    k.bytes            = 1e8;
    k.table_family     = "mla_decode";
    k.table_dims       = {{"context", ctx}, {"heads", 128}};
    k.table_tokens     = tokens;
    k.table_interp_dim = "context";
    return k;
  };
  // 1536 is half-way: (20.48 + 40.96) / 2 = 30.72 us at 64 tokens; 1800: 20.48 + (776/1024) x 20.48 = 36.0 us
  CHECK(kernel_time(hw, mla(1536, 64)).us == Approx(30.72));
  CHECK(kernel_time(hw, mla(1800, 64)).us == Approx(20.48 + 776.0 / 1024 * 20.48));
  CHECK(kernel_time(hw, mla(1536, 64)).method.find("linear in context between 1024 and 2048") != std::string::npos);
  CHECK(kernel_time(hw, mla(1024, 64)).us == Approx(20.48)); // exact dims: that table
  // Within one spacing (1024) outside the tables' contexts: the line through the two nearest, 20.48 us a 1024 tokens
  // of context at 64 tokens; farther out, the roofline.
  CHECK(kernel_time(hw, mla(2560, 64)).us == Approx(40.96 + 0.5 * 20.48));
  CHECK(kernel_time(hw, mla(512, 64)).us == Approx(20.48 - 0.5 * 20.48));
  CHECK(kernel_time(hw, mla(512, 64)).method.find("linear in context through 1024 and 2048 extrapolated to 512") !=
        std::string::npos);
  CHECK(kernel_time(hw, mla(3072, 64)).us == Approx(40.96 + 20.48)); // exactly one spacing out
  CHECK(kernel_time(hw, mla(3073, 64)).bound != Bound::table);
  CHECK(kernel_time(hw, mla(4096, 64)).bound != Bound::table);
  // A line that would go below zero stops at zero (a kernel with a floor family then takes its floor).
  HwProfile steep = hw;
  for (OpTable& t : steep.tables)
    if (t.dims.at("heads") == 128)
      t.us_by_tokens.y = {t.dims.at("context") == 1024 ? 1.0 : 30.0, t.dims.at("context") == 1024 ? 1.0 : 30.0};
  CHECK(kernel_time(steep, mla(100, 64)).us == 0.0);
  CHECK(kernel_time(steep, mla(100, 64)).bound == Bound::table);
  // Only one table in the dim: nothing to draw a line through.
  HwProfile one = hw;
  one.tables.erase(one.tables.begin()); // keeps context 2048 (and the 16-head table)
  CHECK(kernel_time(one, mla(1536, 64)).bound != Bound::table);
  // without the interpolation dim, only exact dims.
  KernelWork exact_only       = mla(1536, 64);
  exact_only.table_interp_dim = "";
  CHECK(kernel_time(hw, exact_only).bound != Bound::table);
}

TEST_CASE("models::KernelCost: a grouped GEMM between two expert counts' tables is linear between them, not the "
          "roofline",
          "[quick]")
{
  // The tables hold 8 and 16 experts (as the shipped H200 profile does); EP32 over 288 slots puts 9 on a rank.
  HwProfile hw = dbosim::test::h200_like();
  for (int e : {8, 16}) // 8: 160 / 2400 us, 16: 320 / 4800 us
    add_table(hw, "grouped_gemm_fp8", {{"experts", e}, {"n", 4096}, {"k", 7168}},
              Curve{{256, 4096}, {e * 20.0, e * 300.0}, ""});
  // 9 experts of 4096 rows each: 2400 + (1/8) x (4800 - 2400) = 2700 us, past the roofline's ~1660 us
  const KernelTime nine =
      kernel_time(hw, grouped_gemm_kernel("experts_gate_up", 9 * 4096.0, 9, 9, 4096, 7168, DType::fp8));
  CHECK(nine.bound == Bound::table);
  CHECK(nine.us == Approx(2700));
  CHECK(nine.method.find("linear in experts between 8 and 16 at 9") != std::string::npos);
  // Past the last token count: each table's throughput at its last point (8192 rows: 2 x 2700 us).
  CHECK(kernel_time(hw, grouped_gemm_kernel("experts_gate_up", 9 * 8192.0, 9, 9, 4096, 7168, DType::fp8)).us ==
        Approx(5400));
  // Only 5 of the 9 experts hold tokens: the active share of the 9-expert time at the active experts' rows.
  CHECK(kernel_time(hw, grouped_gemm_kernel("experts_gate_up", 5 * 4096.0, 5, 9, 4096, 7168, DType::fp8)).us ==
        Approx(2700 * 5.0 / 9));
  // Within one spacing (8 experts) past the largest table: the line through the 8- and 16-expert tables; 20
  // experts: 4800 + 0.5 x 2400 = 6000 us. Past that (36 at EP8 over 288 slots): the roofline.
  CHECK(kernel_time(hw, grouped_gemm_kernel("experts_gate_up", 20 * 4096.0, 20, 20, 4096, 7168, DType::fp8)).us ==
        Approx(6000));
  CHECK(kernel_time(hw, grouped_gemm_kernel("experts_gate_up", 36 * 4096.0, 36, 36, 4096, 7168, DType::fp8)).bound !=
        Bound::table);
}

TEST_CASE("models::KernelCost: MLA's per-head products read the head_bmm tables, linear in heads between two",
          "[quick]")
{
  // Made-up tables at 16 and 64 heads of the W_UK product (k 128 -> n 512), as kernels/torch_mla_bmm.py measures.
  HwProfile hw = dbosim::test::h200_like();
  const KernelTime roofline_price =
      kernel_time(hw, head_bmm_kernel("q_nope_x_w_uk", 16, 64, 512, 128, DType::bf16)); // no table yet
  CHECK(roofline_price.bound != Bound::table);
  for (int h : {16, 64}) // 16: 8 / 16 us, 64: 32 / 64 us
    add_table(hw, "head_bmm_bf16", {{"heads", h}, {"n", 512}, {"k", 128}}, Curve{{1, 256}, {h * 0.5, h * 1.0}, ""});
  const KernelTime at64 = kernel_time(hw, head_bmm_kernel("q_nope_x_w_uk", 16, 64, 512, 128, DType::bf16));
  CHECK(at64.bound == Bound::table);
  CHECK(at64.us == Approx(32 + (16.0 - 1) / 255 * 32)); // on the 64-head table's line at 16 tokens
  CHECK(at64.us != Approx(roofline_price.us));
  // 32 heads (TP4): a third of the way from 16 to 64 at one token, 8 + (32 - 16) / 48 x 24 = 16 us
  const KernelTime at32 = kernel_time(hw, head_bmm_kernel("q_nope_x_w_uk", 1, 32, 512, 128, DType::bf16));
  CHECK(at32.us == Approx(16));
  CHECK(at32.method.find("linear in heads between 16 and 64 at 32") != std::string::npos);
  // The other product (k 512 -> n 128) has no table here: the roofline, not the W_UK tables.
  CHECK(kernel_time(hw, head_bmm_kernel("out_x_w_uv", 16, 64, 128, 512, DType::bf16)).bound != Bound::table);
}

TEST_CASE("models::OpTables: the family index finds the table a scan finds, a profile changed since is scanned",
          "[quick]")
{
  HwProfile hw = dbosim::load_hw_profile("h200");
  REQUIRE(hw.table_index);
  REQUIRE(hw.table_index->count == hw.tables.size());
  auto scan = [&](const std::string& family, const std::map<std::string, int>& dims) -> const OpTable* {
    for (const OpTable& t : hw.tables)
      if (t.family == family && t.dims == dims)
        return &t;
    return nullptr;
  };
  for (const OpTable& t : hw.tables)
    CHECK(find_table(hw, t.family, t.dims) == scan(t.family, t.dims));
  CHECK(find_table(hw, "no_such_family", {}) == nullptr);
  // A table added after the index was built (a test's or a derived profile's): found by the scan.
  OpTable added;
  added.family       = "gemm_bf16";
  added.dims         = {{"n", 3}, {"k", 5}};
  added.us_by_tokens = table_curve();
  CHECK(find_table(hw, "gemm_bf16", added.dims) == nullptr); // dims no table of the family has
  hw.tables.push_back(added);
  REQUIRE(find_table(hw, "gemm_bf16", added.dims) != nullptr);
  CHECK(find_table(hw, "gemm_bf16", added.dims)->us_by_tokens.y == added.us_by_tokens.y);
  // Indexed again: the same answers.
  index_tables(hw);
  CHECK(hw.table_index->count == hw.tables.size());
  for (const OpTable& t : hw.tables)
    CHECK(find_table(hw, t.family, t.dims) == scan(t.family, t.dims));
}

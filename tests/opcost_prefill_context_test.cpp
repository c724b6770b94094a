/* Prefill attention over a context (models/PrefillAttention): a chunk of q new tokens per request at the end of a
 * context of L keys is timed at the attention_prefill table's point with the same query-key pairs, never below its
 * roofline; and the cost guard compares each kernel with its own dtype's peak. Closed forms in the comments. */
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "models/AttentionOps.hpp"
#include "models/CostGuards.hpp"
#include "models/OpCost.hpp"
#include "models/OpTables.hpp"
#include "models/PrefillAttention.hpp"
#include "opcost_test_support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace dbosim::models;

namespace {
StepShape prefill(int tokens, int batch, int context)
{
  StepShape s;
  s.phase = Phase::prefill, s.tokens = tokens, s.batch = batch, s.context_len = context;
  return s;
}

/** A1 of one MoE-less layer (core attention + o_proj) on one rank, ep = 1 so no D/C is needed. */
OpCost a1(const ModelSpec& m, const HwProfile& hw, const StepShape& s)
{
  const ParallelSpec par;
  return sum_kernels(hw, OpKind::A1, "attention", attention_a1_kernels(m, par, s, false));
}

KernelWork core_of(const ModelSpec& m, const StepShape& s)
{
  for (const auto& k : attention_a1_kernels(m, ParallelSpec{}, s, false))
    if (k.name == "attention_prefill")
      return k;
  FAIL("no attention_prefill kernel");
  return {};
}
} // namespace

TEST_CASE("models::PrefillAttention: the equal-pairs length and the causal table", "[quick]")
{
  SECTION("a self-attention's own pairs give back its length exactly")
  {
    for (double q : {1.0, 2.0, 128.0, 4096.0, 16384.0, 32768.0, 1048576.0})
      CHECK(equal_pairs_tokens(self_attention_pairs(q)) == q);
    CHECK(equal_pairs_tokens(0) == 0);
    // 4096 new tokens at context 32768: 4096 x 28672 + 4096 x 4097 / 2 = 125,833,216 pairs, 15.0x a 4096 prompt's;
    // x (x + 1) / 2 = 125,833,216 gives x = 15863.4.
    const double pairs = causal_pairs(prefill(4096, 1, 32768));
    CHECK(pairs == 4096.0 * 28672 + 4096.0 * 4097 / 2);
    CHECK(equal_pairs_tokens(pairs) == Approx(15863.4).epsilon(1e-5));
  }
  SECTION("at a point its time, linear in pairs between points, clamped below, the last pair rate above")
  {
    Curve c;
    c.x             = {100, 200};
    c.y             = {10, 40};
    TableLookup how = TableLookup::exact;
    CHECK(causal_table_us(c, 200, &how) == 40);
    CHECK(how == TableLookup::exact);
    // 150 tokens: 11325 pairs, between 5050 and 20100: 10 + 30 x 6275 / 15050 = 22.51 us (linear in tokens: 25)
    CHECK(causal_table_us(c, 150, &how) == Approx(10 + 30.0 * 6275 / 15050));
    CHECK(how == TableLookup::interpolated);
    CHECK(causal_table_us(c, 50, &how) == 10);
    CHECK(how == TableLookup::clamped);
    // 400 tokens: 40 us x (400 x 401 / 2) / (200 x 201 / 2) = 159.60 us (table_us would say 80: linear in tokens)
    CHECK(causal_table_us(c, 400, &how) == Approx(40.0 * 80200 / 20100));
    CHECK(how == TableLookup::extrapolated);
    CHECK_THROWS_AS(causal_table_us(c, -1), std::invalid_argument);
  }
}

TEST_CASE("models::PrefillAttention: A1 grows with the context at fixed new tokens (H200 profile, DeepSeek-V3)",
          "[quick]")
{
  const HwProfile hw = dbosim::load_hw_profile("h200");
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  const OpTable* tab = find_table(hw, "attention_prefill", {{"heads", 128}, {"head_dim", 192}});
  REQUIRE(tab != nullptr);
  const Curve& c = tab->us_by_tokens;

  SECTION("at context == tokens, one request: the table's own point, as before context was modelled")
  {
    for (int q : {512, 1024, 4096, 8192}) {
      const KernelTime t = prefill_attention_time(v3, hw, ParallelSpec{}, q, q);
      CHECK(t.us == table_us(c, q));
      CHECK(t.bound == Bound::table);
    }
  }
  SECTION("a 4096-token chunk: A1 strictly grows with the context, the core at the equal-pairs point")
  {
    double last_a1 = 0, last_core = 0;
    for (int ctx : {4096, 8192, 16384, 32768}) {
      const OpCost op    = a1(v3, hw, prefill(4096, 1, ctx));
      const KernelTime t = prefill_attention_time(v3, hw, ParallelSpec{}, 4096, ctx);
      CHECK(op.duration_us > last_a1);
      CHECK(t.us > last_core);
      CHECK_NOTHROW(check_op_bounds(op, hw));
      last_a1   = op.duration_us;
      last_core = t.us;
    }
    // context 32768: 125,833,216 pairs (x = 15863.4), between the table's 12288 (75,503,616 pairs, 12260 us) and
    // 16384 (134,225,920 pairs, 21450 us) points, linear in pairs: 20137 us.
    const double pairs = 4096.0 * 28672 + 4096.0 * 4097 / 2;
    REQUIRE(c.x[c.x.size() - 2] == 12288);
    const double expect = 12260 + (pairs - 75503616.0) / (134225920.0 - 75503616.0) * (21450 - 12260);
    CHECK(prefill_attention_time(v3, hw, ParallelSpec{}, 4096, 32768).us == Approx(expect).epsilon(1e-9));
  }
  SECTION("past the table's last point the time follows the pairs at the last point's pair rate")
  {
    // 8192 new tokens at context 32768: 8192 x 24576 + 8192 x 8193 / 2 pairs, x = 21673 > 16384.
    const double pairs = 8192.0 * 24576 + 8192.0 * 8193 / 2;
    CHECK(prefill_attention_time(v3, hw, ParallelSpec{}, 8192, 32768).us ==
          Approx(21450 * pairs / self_attention_pairs(16384)).epsilon(1e-9));
  }
  SECTION("FLOPs and bytes: causal pairs over the context; the context's per-head K/V is read")
  {
    const KernelWork k4  = core_of(v3, prefill(4096, 1, 4096));
    const KernelWork k32 = core_of(v3, prefill(4096, 1, 32768));
    CHECK(k32.flops == 2.0 * 128 * (192 + 128) * (4096.0 * 28672 + 4096.0 * 4097 / 2));
    // 28672 more keys, each with 128 heads x (K 192 + V 128) bf16 elements.
    CHECK(k32.bytes - k4.bytes == Approx(28672.0 * 128 * 320 * 2));
    CHECK(k32.table_axis == TableAxis::causal_tokens);
  }
  SECTION("two requests of 2048 new tokens: the table at the length with their summed pairs")
  {
    // 2 x (2048 x 2048 + 2048 x 2049 / 2) = 12,584,960 pairs, between 4096 (8,390,656; 1279 us) and 6144
    // (18,877,440; 2760 us).
    const double pairs = 2 * (2048.0 * 2048 + 2048.0 * 2049 / 2); // each at context 4096
    CHECK(prefill_attention_time(v3, hw, ParallelSpec{}, 2048, 4096, 2).us ==
          Approx(1279 + (pairs - 8390656.0) / (18877440.0 - 8390656.0) * (2760 - 1279)).epsilon(1e-9));
  }
}

TEST_CASE("models::PrefillAttention: GQA grows with the context too (H200 profile, Qwen3-235B)", "[quick]")
{
  const HwProfile hw   = dbosim::load_hw_profile("h200");
  const ModelSpec qwen = dbosim::load_model_zoo("qwen3-235b-a22b");
  const OpTable* tab   = find_table(hw, "attention_prefill", {{"heads", 64}, {"head_dim", 128}});
  REQUIRE(tab != nullptr);
  CHECK(prefill_attention_time(qwen, hw, ParallelSpec{}, 4096, 4096).us == table_us(tab->us_by_tokens, 4096));
  const double t8  = prefill_attention_time(qwen, hw, ParallelSpec{}, 4096, 8192).us;
  const double t32 = prefill_attention_time(qwen, hw, ParallelSpec{}, 4096, 32768).us;
  CHECK(t8 > table_us(tab->us_by_tokens, 4096));
  CHECK(t32 > t8);
  // The context's K/V come from the cache: 4 kv heads x 128 x 2 (K, V) x 2 bytes per key.
  CHECK(core_of(qwen, prefill(4096, 1, 8192)).bytes - core_of(qwen, prefill(4096, 1, 4096)).bytes ==
        Approx(4096.0 * 4 * 128 * 2 * 2));
}

TEST_CASE("models::PrefillAttention: a table faster than the roofline is floored at the roofline", "[quick]")
{
  // The h200-like profile (efficiencies 1) with a table 1000x too fast: the time is the roofline's,
  // max(FLOPs / 989 TF/s, bytes / 4.8 TB/s).
  HwProfile hw = dbosim::test::h200_like();
  OpTable t;
  t.family         = "attention_prefill";
  t.dims           = {{"heads", 128}, {"head_dim", 192}};
  t.us_by_tokens.x = {1024, 4096};
  t.us_by_tokens.y = {0.1, 1};
  hw.tables.push_back(t);
  const ModelSpec v3   = dbosim::load_model_zoo("deepseek-v3");
  const KernelWork k   = core_of(v3, prefill(4096, 1, 16384));
  const KernelTime got = kernel_time(hw, k);
  const double roof    = std::max(k.flops / 989e12, k.bytes / 4.8e12) * 1e6;
  CHECK(got.us == Approx(roof).epsilon(1e-12));
  CHECK(got.bound == Bound::compute);
  CHECK(got.method.find("floor roofline") != std::string::npos);
}

TEST_CASE("models::CostGuards: each kernel against the peak of its own compute dtype", "[quick]")
{
  const HwProfile hw = dbosim::test::h200_like(); // bf16 989 TF/s, fp8 1979 TF/s
  auto op_with       = [](DType dtype, double flops, double us) {
    OpCost c;
    c.kind        = OpKind::A1;
    c.flops       = flops;
    c.duration_us = us;
    c.sm_family   = "attention";
    c.method      = "test";
    OpKernelPart p;
    p.us            = us;
    p.name          = "attention_prefill";
    p.flops         = flops;
    p.compute_dtype = dtype;
    c.parts         = {p};
    return c;
  };
  // 1.5e12 flop in 1000 us = 1.5 PF/s: above the BF16 peak, below the FP8 one.
  CHECK_THROWS_WITH(check_op_bounds(op_with(DType::bf16, 1.5e12, 1000), hw),
                    Catch::Contains("op A1 violates a physical bound") && Catch::Contains("kernel attention_prefill") &&
                        Catch::Contains("exceeds the profile's peak for bf16"));
  CHECK_NOTHROW(check_op_bounds(op_with(DType::fp8, 1.5e12, 1000), hw));
  CHECK_NOTHROW(check_op_bounds(op_with(DType::bf16, 0.9e12, 1000), hw));
  // The op's duration below the sum of its kernels' floors (its kernels themselves plausible).
  OpCost short_op      = op_with(DType::bf16, 0.9e12, 1000);
  short_op.duration_us = 500;
  CHECK_THROWS_WITH(check_op_bounds(short_op, hw), Catch::Contains("shorter than its kernels' FLOPs"));
}

TEST_CASE("models::CostGuards: a 4096-token prefill at 32k context passes on the H200 (was above the FP8 peak)",
          "[quick]")
{
  const HwProfile hw = dbosim::load_hw_profile("h200");
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  for (int ctx : {16384, 32768, 131072}) {
    const OpCost op = a1(v3, hw, prefill(4096, 1, ctx));
    CHECK_NOTHROW(check_op_bounds(op, hw));
    // and the attention kernel's own rate stays under the BF16 peak
    const double core_flops = core_of(v3, prefill(4096, 1, ctx)).flops;
    CHECK(core_flops / (prefill_attention_time(v3, hw, ParallelSpec{}, 4096, ctx).us * 1e-6) <
          hw.peak_flops_per_s.at(DType::bf16));
  }
}

TEST_CASE("models::PrefillAttention: the rule against SDPA chunks over a context measured on the H200", "[quick]")
{
  // tests/data/calib/h200_attention_context.jsonl (kernels/torch_attention_context.py): PyTorch SDPA, flash backend,
  // bottom-right causal mask, new tokens 512..8192 over contexts up to 32768, and self-attentions 512..32768. The
  // profile's table is the flash self-attentions (context == tokens); every chunk with context > tokens is predicted
  // from it and compared. No parameter is fitted: the predicted points are not in the table.
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/tests/data/calib/h200_attention_context.jsonl");
  REQUIRE(in.good());
  struct Rec {
    int heads, head_dim, tokens, context;
    double us;
  };
  std::vector<Rec> recs;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("backend") == "flash")
      recs.push_back({j.at("heads").get<int>(), j.at("head_dim").get<int>(), j.at("tokens").get<int>(),
                      j.at("context").get<int>(), j.at("us").get<double>()});
  }
  REQUIRE(recs.size() == 58);
  const HwProfile datasheet =
      dbosim::load_hw_profile(std::string(DBOSIM_SOURCE_DIR) + "/tests/data/calib/h200_datasheet.yaml");
  struct Case {
    const char* model;
    int heads, head_dim;
    double median_max, max_max; // bounds on |error| (%), a little above what was measured
  };
  for (const Case& cs : {Case{"deepseek-v3", 128, 192, 4, 13}, Case{"qwen3-235b-a22b", 64, 128, 11, 30}}) {
    HwProfile hw = datasheet;
    OpTable t;
    t.family = "attention_prefill";
    t.dims   = {{"heads", cs.heads}, {"head_dim", cs.head_dim}};
    std::map<int, double> self_us;
    for (const Rec& r : recs)
      if (r.heads == cs.heads && r.tokens == r.context)
        self_us[r.tokens] = r.us;
    for (const auto& [x, us] : self_us) {
      t.us_by_tokens.x.push_back(x);
      t.us_by_tokens.y.push_back(us);
    }
    hw.tables         = {t};
    const ModelSpec m = dbosim::load_model_zoo(cs.model);
    std::vector<double> err, scaled_err; // this rule; t(q) x pairs(q, ctx) / pairs(q, q)
    for (const Rec& r : recs) {
      if (r.heads != cs.heads || r.tokens == r.context)
        continue;
      const double got = prefill_attention_time(m, hw, ParallelSpec{}, r.tokens, r.context).us;
      err.push_back(std::abs(got / r.us - 1) * 100);
      const double pairs = causal_pairs(prefill(r.tokens, 1, r.context));
      scaled_err.push_back(std::abs(self_us.at(r.tokens) * pairs / self_attention_pairs(r.tokens) / r.us - 1) * 100);
    }
    REQUIRE(err.size() == 20);
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    INFO(cs.model << ": median |error| " << median(err) << "%, max " << *std::max_element(err.begin(), err.end())
                  << "%; scaling t(q) by pairs: median " << median(scaled_err) << "%, max "
                  << *std::max_element(scaled_err.begin(), scaled_err.end()) << "%");
    CHECK(median(err) < cs.median_max);
    CHECK(*std::max_element(err.begin(), err.end()) < cs.max_max);
    CHECK(median(err) < median(scaled_err) / 3);
    WARN("prefill attention vs SDPA chunks, " << cs.model << ": median |error| " << median(err) << "%, max "
                                              << *std::max_element(err.begin(), err.end())
                                              << "% (t(q) x pairs ratio: median " << median(scaled_err) << "%, max "
                                              << *std::max_element(scaled_err.begin(), scaled_err.end()) << "%)");
  }
}

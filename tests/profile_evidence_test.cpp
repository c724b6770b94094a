/* dbosim tests — models/ProfileEvidence: each profile family's evidence from its sources; the published tables of the
 * Blackwell profiles (a source for every point, the roofline past their last point, the fitted FP4 and FP8 fractions);
 * the estimated families a step's costs used. */
#include "config/HwProfileLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/KernelCost.hpp"
#include "models/OpCost.hpp"
#include "models/Precision.hpp"
#include "models/ProfileEvidence.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <string>

using namespace dbosim::models;
using dbosim::list_hw_profiles;
using dbosim::load_hw_profile;
using dbosim::load_network_facts;

namespace {

std::string lower(std::string s)
{
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const FamilyEvidence& family(const std::vector<FamilyEvidence>& all, const std::string& name)
{
  for (const FamilyEvidence& f : all)
    if (f.family == name)
      return f;
  FAIL("no family " << name);
  return all.front();
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

} // namespace

TEST_CASE("ProfileEvidence: a source's kind is its 'estimate' prefix, else the profile's provenance", "[quick]")
{
  CHECK(classify_source("datasheet", "estimate: order of 1 us") == Evidence::estimated);
  CHECK(classify_source("measured", "Estimate, derived: 75% of the link") == Evidence::estimated);
  CHECK(classify_source("measured", "calibrate run 2026-11-29") == Evidence::measured);
  CHECK(classify_source("derived", "kept from h200 (measured ...)") == Evidence::derived);
  CHECK(classify_source("datasheet", "NVIDIA HGX B200 datasheet") == Evidence::published);
  CHECK(classify_source("datasheet", "") == Evidence::published);
}

TEST_CASE("ProfileEvidence: no table point of a datasheet profile without a published source", "[quick]")
{
  int tables = 0;
  for (const auto& name : list_hw_profiles()) {
    const HwProfile hw = load_hw_profile(name);
    if (hw.provenance.kind != "datasheet")
      continue;
    for (const OpTable& t : hw.tables) {
      INFO(name << " " << t.family);
      ++tables;
      CHECK(classify_source(hw.provenance.kind, t.us_by_tokens.source) == Evidence::published);
      // a URL, or a repository file with its commit
      CHECK((contains(t.us_by_tokens.source, "https://") || contains(t.us_by_tokens.source, " at ")));
      CHECK(t.us_by_tokens.x.size() == t.us_by_tokens.y.size());
    }
  }
  CHECK(tables >= 2); // the B200 and GB200 NVFP4 tables
}

TEST_CASE("ProfileEvidence: a datasheet profile's number borrowed from a Hopper measurement is an estimate", "[quick]")
{
  for (const auto& name : list_hw_profiles()) {
    const HwProfile hw = load_hw_profile(name);
    if (hw.provenance.kind != "datasheet")
      continue;
    const NetworkFacts net = load_network_facts(name);
    auto check             = [&](const std::string& key, const std::string& src) {
      INFO(name << " " << key << ": " << src);
      const std::string s = lower(src);
      if (contains(s, "h200's measurement") || contains(s, "h200 measurement") || contains(s, "hopper measurement") ||
          contains(s, "fitted on h800") || contains(s, "fitted there"))
        CHECK(classify_source("datasheet", src) == Evidence::estimated);
    };
    for (const auto& [key, src] : hw.sources)
      check(key, src);
    for (const auto& [key, src] : net.sources)
      check(key, src);
  }
}

TEST_CASE("ProfileEvidence: the B200's GEMMs have one published table, every other shape estimated", "[quick]")
{
  const HwProfile hw                    = load_hw_profile("b200");
  const NetworkFacts net                = load_network_facts("b200");
  const std::vector<FamilyEvidence> all = profile_evidence(hw, &net);
  const FamilyEvidence& gemm            = family(all, "gemm");
  CHECK(gemm.tables == 1);
  CHECK(gemm.tables_evidence == Evidence::published);
  CHECK(gemm.fallback == Evidence::estimated);
  CHECK(family(all, "mla_decode").tables == 0);
  CHECK(family(all, "mla_decode").fallback == Evidence::estimated);
  const std::string text = format_profile_evidence(all);
  CHECK(contains(text, "gemm          1 table published; other shapes estimated (efficiency.gemm"));
  CHECK(contains(text, "mla_decode    estimated (efficiency.attention"));
  CHECK(contains(text, "a2a           estimated ("));
  // The measured H200: tables and fallbacks measured, never called estimated.
  const HwProfile h200                     = load_hw_profile("h200");
  const std::vector<FamilyEvidence> h200_f = profile_evidence(h200, nullptr);
  CHECK(family(h200_f, "gemm").tables_evidence == Evidence::measured);
  CHECK(family(h200_f, "mla_decode").fallback == Evidence::measured);
  CHECK_FALSE(contains(format_profile_evidence(h200_f), "estimated"));
  // MLA's per-head products (head_bmm_bf16 tables) are GEMM tables: one more, with its source's evidence
  HwProfile with_bmm = h200;
  OpTable bmm;
  bmm.family       = "head_bmm_bf16";
  bmm.dims         = {{"heads", 128}, {"n", 512}, {"k", 128}};
  bmm.us_by_tokens = Curve{{1, 64}, {12, 15}, "estimate: made up for this test"};
  with_bmm.tables.push_back(bmm);
  const FamilyEvidence bmm_gemm = family(profile_evidence(with_bmm, nullptr), "gemm");
  CHECK(bmm_gemm.tables == family(h200_f, "gemm").tables + 1);
  CHECK(bmm_gemm.tables_evidence == Evidence::estimated);
}

TEST_CASE("ProfileEvidence: the published NVFP4 table times its shape, the roofline past its last point", "[quick]")
{
  const HwProfile hw   = load_hw_profile("b200");
  const LinearFormat f = quant_format(WeightQuant::nvfp4);
  // In the table: M = 8 is its point.
  const KernelTime at8 = kernel_time(hw, gemm_kernel("down", 8, 7168, 2048, f));
  CHECK(at8.table == "gemm_nvfp4");
  CHECK(at8.us == Approx(3.244));
  // Past M = 32: the last point while the roofline is under it, never the last point scaled by M.
  const KernelTime at256 = kernel_time(hw, gemm_kernel("down", 256, 7168, 2048, f));
  CHECK(at256.us == Approx(3.235));
  const double m = 8192;
  const double roofline_compute_us =
      2 * m * 7168 * 2048 / (hw.peak_flops_per_s.at(DType::fp4) * hw.gemm_fp4_efficiency) * 1e6;
  const KernelTime big = kernel_time(hw, gemm_kernel("down", m, 7168, 2048, f));
  CHECK(big.us == Approx(roofline_compute_us).epsilon(0.02));
  CHECK(big.us < 3.235 * m / 32 / 4);
  // Another NVFP4 shape has no table: the roofline with the fitted FP4 fraction.
  CHECK(hw.gemm_fp4_efficiency == Approx(0.409));
  CHECK(hw.sources.at("efficiency.gemm_fp4").find("Leave-one-out") != std::string::npos);
  CHECK(kernel_time(hw, gemm_kernel("up", 8, 4096, 7168, f)).table.empty());
}

TEST_CASE("ProfileEvidence: the SM100 profiles time compute-bound FP8 GEMMs at the fraction fitted on published "
          "figures",
          "[quick]")
{
  for (const std::string name : {"b200", "gb200"}) {
    INFO(name);
    const HwProfile hw = load_hw_profile(name);
    // Fitted on four published SM100 FP8 GEMM points (CUTLASS per-channel on B200, DeepGEMM block FP8 on GB200), not
    // the 0.75 estimate BF16 GEMMs still take.
    CHECK(hw.gemm_fp8_efficiency == Approx(0.528));
    CHECK(hw.gemm_efficiency == Approx(0.75));
    const std::string& src = hw.sources.at("efficiency.gemm_fp8");
    CHECK(classify_source(hw.provenance.kind, src) == Evidence::published);
    CHECK(contains(src, "Leave-one-out"));
    CHECK(contains(src, "https://github.com/vllm-project/vllm/pull/19566"));
    CHECK(contains(src, "https://github.com/sgl-project/sglang/pull/13528"));
    // A compute-bound block-FP8 GEMM (a published shape: N=6144 K=4096, M=16384) runs at that fraction of the FP8
    // peak: on the B200 2376 TF/s against the 2447 posted (vLLM PR #19566), where the estimate gave 3375.
    const double m = 16384;
    const int n = 6144, k = 4096;
    const KernelTime t = kernel_time(hw, gemm_kernel("up", m, n, k, quant_format(WeightQuant::fp8_block)));
    CHECK(t.bound == Bound::compute);
    const double tflops = 2 * m * n * k / (t.us * 1e-6) / 1e12;
    CHECK(tflops == Approx(0.528 * hw.peak_flops_per_s.at(DType::fp8) / 1e12).epsilon(0.01));
    if (name == "b200")
      CHECK(tflops == Approx(2447).epsilon(0.05));
    // Expert GEMMs too: a compute-bound grouped FP8 GEMM takes the same fraction.
    const KernelTime g =
        kernel_time(hw, grouped_gemm_kernel("g", 65536, 32, 32, 4096, 7168, quant_format(WeightQuant::fp8_block)));
    CHECK(g.bound == Bound::compute);
    CHECK(2.0 * 65536 * 4096 * 7168 / (g.us * 1e-6) ==
          Approx(0.528 * hw.peak_flops_per_s.at(DType::fp8)).epsilon(0.01));
  }
}

TEST_CASE("ProfileEvidence: a step names the estimated families it used, not those its tables priced", "[quick]")
{
  const HwProfile hw     = load_hw_profile("b200");
  const NetworkFacts net = load_network_facts("b200");
  OpKernelPart tabled;
  tabled.table_family  = "gemm_nvfp4";
  tabled.table_dims    = {{"n", 7168}, {"k", 2048}};
  tabled.floor_family  = "gemm_fp8";
  tabled.timed_by      = "gemm_nvfp4";
  tabled.compute_dtype = DType::fp4;
  OpCost shared;
  shared.kind = OpKind::S;
  shared.parts.push_back(tabled);
  LayerCosts layer;
  layer.ops.push_back(shared);
  std::vector<std::string> used = estimated_families_used(hw, &net, {&layer}, {}, false);
  REQUIRE(used.size() == 1); // the host costs only
  CHECK(contains(used[0], "host ("));

  // An NVFP4 GEMM on the roofline reads the fitted (published) FP4 fraction; a BF16 one the estimated efficiency.gemm.
  OpKernelPart fp4_roofline = tabled;
  fp4_roofline.table_dims   = {{"n", 4096}, {"k", 7168}};
  fp4_roofline.timed_by     = "";
  layer.ops[0].parts.push_back(fp4_roofline);
  OpCost dispatch;
  dispatch.kind = OpKind::D;
  layer.ops.push_back(dispatch);
  used = estimated_families_used(hw, &net, {&layer}, {}, false);
  REQUIRE(used.size() == 2);
  CHECK(contains(used[0], "host ("));
  CHECK(contains(used[1], "a2a (deepep_call_fixed"));
  CHECK_FALSE(contains(used[1], "switch_latency")); // one NVLink domain: the NIC facts price none of it
  CHECK(contains(estimated_families_used(hw, &net, {&layer}, {}, true).back(), "switch_latency"));

  OpKernelPart bf16_roofline  = fp4_roofline;
  bf16_roofline.compute_dtype = DType::bf16;
  bf16_roofline.table_family  = "gemm_bf16";
  layer.ops[0].parts.push_back(bf16_roofline);
  used = estimated_families_used(hw, &net, {&layer}, {}, false);
  REQUIRE(used.size() == 3);
  CHECK(used[0] == "gemm (efficiency.gemm)");
}

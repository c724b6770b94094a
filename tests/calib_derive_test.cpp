/* dbosim tests — derived profiles (calibrate/ProfileDerive): a GPU sharing a measured GPU's compute die, with its
 * own HBM and links. The rule in closed form, the synthetic parent it is applied to, and the shipped files. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "calibrate/ProfileDerive.hpp"
#include "calibrate/TableWork.hpp"
#include "config/HwProfileLoader.hpp"
#include "models/OpTables.hpp"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

using namespace dbosim;
using dbosim::calib::derive_us;

namespace {

const std::string kSrc = DBOSIM_SOURCE_DIR;

std::string read_text(const std::string& path)
{
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// A measured parent: 1000 TFLOP/s BF16, 4.8 TB/s, efficiencies gemm 0.8 and memory 0.9. Three tables:
//  gemm_bf16 {n 4096, k 4096}: at M = 1 it moves 4096*4096*2 + 4096*2 + 4096*2 = 33570816 B and does
//    2*4096*4096 = 33554432 flop: memory 33570816 / (4.8e12 * 0.9) = 7.7710 us >> compute 0.042 us, and the table
//    says 7.771 us: a memory-bound point on the roofline. At M = 8192: compute 2*8192*4096^2 / (1e15 * 0.8)
//    = 343.60 us, memory (33554432 + 2 * 8192*4096*2) / (4.32e12) = 38.84 us (55.65 us at 3.35 TB/s): compute-bound
//    on both GPUs, the table says 400 us.
//  rmsnorm {hidden 7168} at 1024 tokens: 1024*7168*2*2 = 29360128 B, roofline 6.7963 us; the table says 11.796 us,
//    5 us over the roofline.
//  sm_tables and sm_scaling: copied as they are.
const char* kParent = R"(name: p200
gpu: Parent GPU
provenance: {kind: measured, date: 2026-11-29, gpu_name: "P200", sm_count: "132", driver: "1", cuda: "13.0",
             git_commit: "abc", raw_results: "r.jsonl"}
sm_count: {value: 132, source: "measured"}
peak_tflops:
  bf16: {value: 1000, source: "sheet"}
hbm_bandwidth: {value: 4.8TBps, source: "sheet"}
hbm_capacity: {value: 141GB, source: "sheet"}
nvlink_bandwidth: {value: 450GBps, source: "sheet"}
nvlink_latency: {value: 1us, source: "sheet"}
nvlink_domain_size: {value: 8, source: "sheet"}
nic_bandwidth: {value: 400Gbps, source: "sheet"}
nic_latency: {value: 3us, source: "sheet"}
host:
  launch_cpu: {value: 3.5, source: "measured launch"}
  graph_replay_kernel: {value: 0.5, source: "measured"}
  event: {value: 0.9, source: "measured"}
  stream_sync: {value: 1.4, source: "measured"}
efficiency:
  gemm: {value: 0.8, source: "measured"}
  attention: {value: 0.7, source: "measured"}
  memory: {value: 0.9, source: "measured"}
sm_scaling:
  gemm: {retile: true, sms: [68, 132], speed: [0.5, 1], source: "measured curve"}
sm_tables:
  - {family: gemm_bf16, dims: {k: 4096, n: 4096}, sms: 112, tokens: [16, 4096], speed: [1, 0.85], source: "measured"}
comm_kernel: {sms: [4, 132], gbps: [193.3, 1552], source: "measured copy"}
tables:
  - {family: gemm_bf16, dims: {k: 4096, n: 4096}, tokens: [1, 8192], us: [7.771, 400], source: "measured gemm"}
  - {family: rmsnorm, dims: {hidden: 7168}, tokens: [1024], us: [11.796], source: "measured norm"}
)";

const char* kFacts = R"(name: c100
gpu: Child GPU
sm_count: {value: 132, source: "sheet"}
peak_tflops:
  bf16: {value: 1000, source: "sheet"}
hbm_bandwidth: {value: 3.35TBps, source: "child sheet"}
hbm_capacity: {value: 80GB, source: "sheet"}
nvlink_bandwidth: {value: 200GBps, source: "sheet"}
nvlink_latency: {value: 1us, source: "sheet"}
nvlink_domain_size: {value: 8, source: "sheet"}
nic_bandwidth: {value: 400Gbps, source: "sheet"}
nic_latency: {value: 3us, source: "sheet"}
)";

constexpr double kRatio = 4.8 / 3.35; // the HBM bandwidth ratio, parent / child

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

} // namespace

TEST_CASE("calib::derive_us: the roofline part is replaced, the excess over it kept", "[quick]")
{
  CHECK(derive_us(10, 10, 14) == Approx(14));     // on the roofline: the child's roofline
  CHECK(derive_us(15, 10, 14) == Approx(19));     // 5 over it: 5 over the child's
  CHECK(derive_us(400, 343.6, 343.6) == 400);     // compute-bound on both: unchanged
  CHECK(derive_us(8, 10, 14) == Approx(8 * 1.4)); // faster than the parent's roofline: scaled by the ratio
  CHECK(derive_us(3, 0, 5) == 3);                 // no work: kept
}

TEST_CASE("calib::table_kernel_work: every family of the measured H200 profile has a work model", "[quick]")
{
  const auto hw = load_hw_profile("h200");
  for (const auto& t : hw.tables) {
    INFO(models::table_key(t.family, t.dims));
    std::string why;
    const auto w = calib::table_kernel_work(t.family, t.dims, t.us_by_tokens.x.back(), &why);
    REQUIRE(w);
    CHECK(w->bytes > 0);
  }
  std::string why;
  CHECK_FALSE(calib::table_kernel_work("gemm_int3", {{"n", 1}, {"k", 1}}, 1, &why));
  CHECK(why.find("no work model for table family 'gemm_int3'") != std::string::npos);
  CHECK_FALSE(calib::table_kernel_work("grouped_gemm_fp8", {{"n", 1}, {"k", 1}}, 1, &why));
  CHECK(why == "dims has no 'experts'");
  // MLA's per-head products (kernels/torch_mla_bmm.py): the work the model prices them by
  const auto bmm = calib::table_kernel_work("head_bmm_bf16", {{"heads", 128}, {"n", 512}, {"k", 128}}, 4, &why);
  REQUIRE(bmm);
  CHECK(bmm->bytes == models::head_bmm_kernel("q_nope_x_w_uk", 4, 128, 512, 128, models::DType::bf16).bytes);
  CHECK(bmm->flops == 2.0 * 4 * 128 * 512 * 128);
}

TEST_CASE("calib::derived_profile_yaml: memory-bound points scale by the HBM ratio, compute-bound ones do not",
          "[quick]")
{
  test::TempDir dir;
  calib::DeriveOptions opt;
  opt.parent_profile     = dir.write("p200.yaml", kParent);
  opt.parent_label       = "hwprofiles/p200.yaml";
  opt.facts              = dir.write("c100_facts.yaml", kFacts);
  opt.facts_label        = "hwprofiles/facts/c100.yaml";
  const std::string text = calib::derived_profile_yaml(opt);
  CHECK(text == calib::derived_profile_yaml(opt)); // a pure function of its inputs
  const std::string out     = dir.write("c100.yaml", text);
  const models::HwProfile c = load_hw_profile(out);

  CHECK(c.name == "c100");
  CHECK(c.provenance.kind == "derived");
  CHECK(c.provenance.date == "2026-11-29"); // the parent's
  CHECK(c.provenance.details.at("parent") == "p200");
  CHECK(c.provenance.details.at("parent_file") == "hwprofiles/p200.yaml");
  CHECK(c.provenance.details.at("parent_gpu_name") == "P200");
  CHECK(c.provenance.details.at("facts") == "hwprofiles/facts/c100.yaml");
  CHECK(c.provenance.details.at("method").find("t_parent - R_parent + R_this") != std::string::npos);
  CHECK(c.hbm_bytes_per_s == Approx(3.35e12)); // the child's facts
  CHECK(c.nvlink_bytes_per_s == Approx(200e9));
  CHECK(c.sources.at("hbm_bandwidth") == "child sheet");
  CHECK(c.memory_efficiency == Approx(0.9)); // the parent's measured fractions and costs
  CHECK(c.gemm_efficiency == Approx(0.8));
  CHECK(c.launch_cpu_us == Approx(3.5));
  CHECK(c.sources.at("host.launch_cpu").find("kept from p200 (measured 2026-11-29 on P200): measured launch") == 0);
  CHECK(c.sm_scaling.at("gemm").speed.y == std::vector<double>{0.5, 1});
  REQUIRE(c.sm_tables.size() == 1);
  CHECK(c.sm_tables[0].speed_by_tokens.y == std::vector<double>{1, 0.85});

  const models::OpTable* gemm = models::find_table(c, "gemm_bf16", {{"n", 4096}, {"k", 4096}});
  REQUIRE(gemm);
  // M = 1: memory-bound on the roofline -> x 4.8/3.35 (the 4-digit rounding of the written table: 1e-3)
  CHECK(gemm->us_by_tokens.y[0] == Approx(7.771 * kRatio).epsilon(1e-3));
  // M = 8192: compute-bound on both GPUs -> unchanged
  CHECK(gemm->us_by_tokens.y[1] == 400);
  // rmsnorm: 5 us over a 6.7963 us roofline -> 5 us over 6.7963 x 4.8/3.35
  const models::OpTable* norm = models::find_table(c, "rmsnorm", {{"hidden", 7168}});
  REQUIRE(norm);
  CHECK(norm->us_by_tokens.y[0] == Approx(11.796 - 6.7963 + 6.7963 * kRatio).epsilon(1e-3));
  CHECK(gemm->us_by_tokens.source.find("derived from p200") == 0);
  // the copy kernel: 1552 GB/s payload = 2 x 1552 of HBM traffic; per byte 1/1552 - 2/(4320) + 2/(3015) ns
  CHECK(c.comm_kernel_bytes_per_s_by_sms.y[1] ==
        Approx(1e9 / (1 / 1552.0 - 2 / 4320.0 + 2 / (3350 * 0.9))).epsilon(1e-3));

  // the parent's sections it does not rescale are copied as they are
  const YAML::Node p = YAML::Load(kParent), d = YAML::LoadFile(out);
  CHECK(YAML::Dump(d["sm_tables"]) == YAML::Dump(p["sm_tables"]));
}

TEST_CASE("calib::derived_profile_yaml: bad facts and parents are input errors naming the file and key", "[quick]")
{
  test::TempDir dir;
  calib::DeriveOptions opt;
  opt.parent_profile = dir.write("p200.yaml", kParent);
  auto error_of      = [&](const std::string& facts) {
    opt.facts = dir.write("facts.yaml", facts);
    try {
      calib::derived_profile_yaml(opt);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    FAIL("derived but should not");
    return std::string();
  };
  CHECK(error_of(replaced(kFacts, "{value: 132,", "{value: 144,"))
            .find("sm_count: 144 SMs, but the parent p200 has 132") != std::string::npos);
  CHECK(error_of(replaced(kFacts, "3.35TBps", "3.35 parsecs")).find("hbm_bandwidth.value") != std::string::npos);
  CHECK(error_of(replaced(kFacts, "nic_latency", "nic_latencyy")).find("nic_latency") != std::string::npos);
  // a parent table family without a work model: its time cannot be split
  opt.parent_profile = dir.write("p2.yaml", replaced(kParent, "family: rmsnorm", "family: layernorm"));
  CHECK(error_of(kFacts).find("tables[1].family: no work model for table family 'layernorm'") != std::string::npos);
  // a datasheet parent has nothing measured to carry over
  opt.parent_profile = dir.write("p3.yaml", replaced(kParent, "{kind: measured,", "{kind: datasheet,"));
  CHECK(error_of(kFacts).find("the parent of a derived profile must be measured") != std::string::npos);
}

TEST_CASE("calib::derived_profile_yaml: every shipped derived profile is what derive writes from its parent", "[quick]")
{
  int derived = 0;
  for (const std::string& name : list_hw_profiles()) {
    const auto hw = load_hw_profile(name);
    if (hw.provenance.kind != "derived")
      continue;
    INFO(name);
    ++derived;
    const std::string parent = hw.provenance.details.at("parent");
    calib::DeriveOptions opt;
    opt.parent_profile = kSrc + "/hwprofiles/" + parent + ".yaml";
    opt.parent_label   = "hwprofiles/" + parent + ".yaml";
    opt.facts          = kSrc + "/hwprofiles/facts/" + name + ".yaml";
    opt.facts_label    = "hwprofiles/facts/" + name + ".yaml";
    // if this fails after re-measuring the parent: re-run the derive commands of hwprofiles/README.md
    CHECK(calib::derived_profile_yaml(opt) == read_text(kSrc + "/hwprofiles/" + name + ".yaml"));
    CHECK(load_hw_profile(parent).provenance.kind == "measured");
    CHECK(hw.tables.size() == load_hw_profile(parent).tables.size());
  }
  CHECK(derived >= 2); // h100 and h800 when written
}

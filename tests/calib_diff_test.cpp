/* dbosim tests — `dbosim-calibrate diff` (calibrate/ProfileDiff, StepDiff, DiffCommand): two profiles compared family
 * by family, the step times of scenarios under each, and the --max-step-ratio gate. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "calibrate/DiffCommand.hpp"
#include "config/HwProfileLoader.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace dbosim;
using namespace dbosim::calib;

namespace {

const std::string kSrc      = DBOSIM_SOURCE_DIR;
const std::string kH200     = kSrc + "/hwprofiles/h200.yaml";
const std::string kScenario = "dsv3_decode_ep8_serial"; // one rank, one step: two children of a fraction of a second

const FamilyDiff& row(const std::vector<FamilyDiff>& rows, const std::string& section, const std::string& family)
{
  for (const FamilyDiff& f : rows)
    if (f.section == section && f.family == family)
      return f;
  FAIL("no row " << section << " " << family);
  throw std::logic_error("unreachable");
}

/** h200.yaml with every `us` of the tables of `family` multiplied by `factor`; returns its path. */
std::string scaled_copy(const test::TempDir& dir, const std::string& family, double factor)
{
  YAML::Node root = YAML::LoadFile(kH200);
  for (YAML::Node t : root["tables"])
    if (t["family"].as<std::string>() == family)
      for (std::size_t i = 0; i < t["us"].size(); ++i)
        t["us"][i] = t["us"][i].as<double>() * factor;
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << root;
  return dir.write("h200_scaled.yaml", std::string(out.c_str()) + "\n");
}

DiffOptions options(const std::string& a, const std::string& b)
{
  DiffOptions o;
  o.profile_a = a;
  o.profile_b = b;
  o.scenarios = {kScenario};
  return o;
}

int run_calibrate(const std::string& args)
{
  const int status = std::system((std::string(DBOSIM_CALIBRATE_BINARY) + " " + args + " > /dev/null").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

nlohmann::json read_json(const std::string& path)
{
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

} // namespace

TEST_CASE("calib diff: h200 against itself: every ratio exactly 1 and the gate at 1 passes", "[quick]")
{
  DiffOptions o      = options(kH200, "h200"); // a path and a name: the same file
  o.max_step_ratio   = 1.0;
  const DiffReport r = profile_diff(o);
  REQUIRE(!r.families.empty());
  for (const FamilyDiff& f : r.families) {
    INFO(f.section << " " << f.family);
    CHECK(f.points > 0);
    CHECK(f.median_ratio == 1.0);
    CHECK(f.min_ratio == 1.0);
    CHECK(f.max_ratio == 1.0);
    CHECK(f.only_a.empty());
    CHECK(f.only_b.empty());
    CHECK(f.notes.empty());
  }
  const auto hw = load_hw_profile(kH200);
  CHECK(row(r.families, "table", "gemm_bf16").common_entries > 0);
  CHECK(row(r.families, "sm_table", "gemm_bf16").common_entries > 0);
  CHECK(row(r.families, "comm_kernel", "comm_kernel").points ==
        static_cast<int>(hw.comm_kernel_bytes_per_s_by_sms.x.size()));
  REQUIRE(r.steps.size() == 1);
  CHECK(r.steps[0].step_a_us > 0);
  CHECK(r.steps[0].step_b_us == r.steps[0].step_a_us);
  CHECK(r.steps[0].ratio == 1.0);
  CHECK(r.exit_code == 0);
  CHECK(r.json["gate"] == "pass");
}

TEST_CASE("calib diff: one table family 10% slower reads 1.1 there and 1 elsewhere, and the step slows", "[quick]")
{
  const test::TempDir dir;
  const std::string family = "grouped_gemm_fp8"; // the routed experts of DeepSeek-V3 (FP8 weights)
  const double factor      = 1.1;
  const DiffReport r       = profile_diff(options(kH200, scaled_copy(dir, family, factor)));
  CHECK(row(r.families, "table", family).common_entries > 0);
  for (const FamilyDiff& f : r.families) {
    INFO(f.section << " " << f.family);
    if (f.section == "table" && f.family == family) {
      CHECK(f.points > 0);
      CHECK(f.median_ratio == Approx(factor).epsilon(1e-12));
      CHECK(f.min_ratio == Approx(factor).epsilon(1e-12));
      CHECK(f.max_ratio == Approx(factor).epsilon(1e-12));
    } else {
      CHECK(f.min_ratio == 1.0);
      CHECK(f.max_ratio == 1.0);
    }
  }
  REQUIRE(r.steps.size() == 1);
  const double ratio = r.steps[0].ratio;
  CHECK(ratio > 1.0);      // slower kernels, a longer step
  CHECK(ratio <= factor);  // no more than every kernel's slowdown
  CHECK(r.exit_code == 0); // no gate asked

  DiffOptions gated    = options(kH200, scaled_copy(dir, family, factor));
  gated.max_step_ratio = 1.0 + (ratio - 1.0) / 2; // tighter than the change: fails
  CHECK(profile_diff(gated).exit_code == 1);
  gated.max_step_ratio = ratio; // the change itself is within the gate
  CHECK(profile_diff(gated).exit_code == 0);
  gated.profile_a      = gated.profile_b; // B against A gates the same way (A/B counts as much as B/A)
  gated.profile_b      = kH200;
  gated.max_step_ratio = 1.0 + (ratio - 1.0) / 2;
  CHECK(profile_diff(gated).exit_code == 1);
}

TEST_CASE("calib diff: the command line exits 1 when the gate fails, 0 otherwise, and writes --json", "[quick]")
{
  const test::TempDir dir;
  const std::string scaled = scaled_copy(dir, "grouped_gemm_fp8", 1.1);
  const std::string json   = dir.path() + "/diff.json";
  const std::string common = " --scenario " + kScenario + " --json " + json;
  CHECK(run_calibrate("diff " + kH200 + " " + kH200 + common + " --max-step-ratio 1") == 0);
  CHECK(read_json(json)["gate"] == "pass");
  CHECK(run_calibrate("diff " + kH200 + " " + scaled + common + " --max-step-ratio 1") == 1);
  const nlohmann::json j = read_json(json);
  CHECK(j["gate"] == "fail");
  CHECK(j["steps"][0]["ratio"].get<double>() > 1.0);
  CHECK(j["worst_step_ratio"].get<double>() == j["steps"][0]["ratio"].get<double>());
  CHECK(run_calibrate("diff " + kH200 + " " + scaled + common) == 0); // no gate: exit 0
  CHECK(run_calibrate("diff " + kH200 + " " + dir.path() + "/missing.yaml --no-steps") == 2);
}

TEST_CASE("calib diff: h200 against the derived h800 and the datasheet b200", "[quick]")
{
  const auto h200       = load_hw_profile("h200");
  const auto h800       = load_hw_profile("h800");
  const auto b200       = load_hw_profile("b200");
  const DiffReport r    = profile_diff(options("h200", "h800"));
  const FamilyDiff& hbm = row(r.families, "scalar", "hbm_bandwidth");
  CHECK(hbm.single_value);
  CHECK(hbm.median_ratio == Approx(h800.hbm_bytes_per_s / h200.hbm_bytes_per_s));
  CHECK(row(r.families, "table", "grouped_gemm_fp8").max_ratio > 1.0); // memory-bound points slower at lower HBM
  CHECK(row(r.families, "sm_scaling", "gemm").max_ratio == 1.0);       // kept from the parent
  REQUIRE(r.steps.size() == 1);
  CHECK(r.steps[0].ratio > 1.0);

  DiffOptions other   = options("h200", "b200"); // another GPU: compared all the same
  other.steps         = false;
  const DiffReport rb = profile_diff(other);
  CHECK(rb.steps.empty());
  CHECK(row(rb.families, "scalar", "sm_count").median_ratio == Approx(double(b200.sm_count) / h200.sm_count));
  const FamilyDiff& gemm = row(rb.families, "table", "gemm_bf16"); // measured on the H200 only
  CHECK(gemm.points == 0);
  CHECK(gemm.only_a.size() ==
        static_cast<std::size_t>(std::count_if(h200.tables.begin(), h200.tables.end(),
                                               [](const models::OpTable& t) { return t.family == "gemm_bf16"; })));
  CHECK(gemm.only_b.empty());
  CHECK(row(rb.families, "scalar", "peak_tflops.fp4").only_b == std::vector<std::string>{"peak_tflops.fp4"});
  CHECK(family_diff_text(rb.families).find("only in A (") != std::string::npos);
}

TEST_CASE("calib diff: a missing or broken profile is an InputError naming the file, line and key", "[quick]")
{
  const test::TempDir dir;
  DiffOptions o = options("h200", dir.path() + "/none.yaml");
  o.steps       = false;
  CHECK_THROWS_WITH(profile_diff(o), Catch::Contains("none.yaml") && Catch::Contains("cannot open"));
  o.profile_b = dir.write("syntax.yaml", "name: x\ngpu: [1\n");
  CHECK_THROWS_AS(profile_diff(o), InputError);
  CHECK_THROWS_WITH(profile_diff(o), Catch::Contains("syntax.yaml:3"));
  std::ifstream in(kH200);
  std::stringstream text;
  text << in.rdbuf();
  std::string bad = text.str();
  bad.replace(bad.find("sm_count: {value: 132"), 21, "sm_count: {value: -1");
  o.profile_b = dir.write("range.yaml", bad);
  CHECK_THROWS_WITH(profile_diff(o), Catch::Contains("range.yaml:") && Catch::Contains("sm_count.value"));
}

TEST_CASE("dbosim-calibrate: usage errors exit 2, help exits 0", "[quick]")
{
  CHECK(run_calibrate("--help") == 0);
  CHECK(run_calibrate("2>/dev/null") == 2);                        // no subcommand
  CHECK(run_calibrate("--bogus 2>/dev/null") == 2);                // an unknown flag
  CHECK(run_calibrate("diff 2>/dev/null") == 2);                   // diff's two profiles missing
  CHECK(run_calibrate("fit --raw /nonexistent 2>/dev/null") == 2); // a file that does not exist, required ones missing
  CHECK(run_calibrate("diff a b --max-step-ratio 0.5 2>/dev/null") == 2); // a factor below 1
}

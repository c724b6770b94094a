/* dbosim validate — trace import: the rule table on the profile-data kernel CSV and on Chrome traces, errors on
 * malformed input, and the CLI comparison against a dbosim trace. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "validate/TraceImport.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

using namespace dbosim::validate;

namespace {
const std::string ref_csv = std::string(DBOSIM_SOURCE_DIR) + "/validate/traces/profile_data_train_kernels.csv";
}

TEST_CASE("validate trace: rule table maps kernels to op kinds", "[quick]")
{
  auto kind = [](std::string name, std::string cls, std::string phase, std::string cat = "") {
    return op_kind_of(TraceKernel{std::move(name), std::move(cls), std::move(phase), std::move(cat), "0", 0, 1});
  };
  CHECK(kind("A1", "", "") == "A1");
  CHECK(kind("MLP", "", "", "compute") == "MLP");
  CHECK(kind("A0", "", "", "host_launch").empty());
  CHECK(kind("x", "ep_dispatch", "dispatch(F)") == "D");
  CHECK(kind("x", "ep_combine", "dispatch(B)") == "C"); // the class wins over the phase (backward dispatch = combine)
  CHECK(kind("deep_ep::intranode::dispatch<8>", "", "") == "D");
  CHECK(kind("flash_fwd_kernel", "", "") == "A1");
  CHECK(kind("x", "attention_core", "attn(F)") == "A1");
  CHECK(kind("x", "gate_topk", "attn(F)") == "A1");
  CHECK(kind("x", "dense_gemm", "attn(F)") == "A0");
  CHECK(kind("x", "dense_gemm", "mlp(F)") == "S");
  CHECK(kind("x", "expert_grouped_gemm", "mlp(F)") == "MLP");
  CHECK(kind("x", "wgrad_gemm", "mlp(W)") == "other");
  CHECK(kind("elementwise", "", "") == "other");
}

TEST_CASE("validate trace: the profile-data CSV splits into op kinds on their streams", "[quick]")
{
  const auto kernels = read_trace(ref_csv);
  REQUIRE(kernels.size() == 983);
  const auto t = op_totals(kernels);
  REQUIRE(t.count("D"));
  REQUIRE(t.count("C"));
  // every DeepEP kernel of that trace ran on the comm stream (27), every attention kernel on the compute stream (7)
  CHECK(t.at("D").us_by_stream.size() == 1);
  CHECK(t.at("D").us_by_stream.count("27") == 1);
  CHECK(t.at("C").us_by_stream.count("27") == 1);
  CHECK(t.at("A1").us_by_stream.count("7") == 1);
  CHECK(t.at("A1").kernels == 36); // attention_core 16 + gate_topk 20
  double sum = 0, all = 0;
  for (const auto& [k, o] : t)
    sum += o.total_us;
  for (const auto& k : kernels)
    all += k.dur_us;
  CHECK(sum == Approx(all)); // nothing dropped (no host slices in a kernel CSV)
}

TEST_CASE("validate trace: malformed input is an InputError naming file and line", "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string bad = dir.write("bad.csv", "stream,start_us,dur_us,name\n7,0,12,k\n7,3,-1,k\n");
  try {
    read_trace(bad);
    FAIL("no error");
  } catch (const dbosim::InputError& e) {
    CHECK(std::string(e.what()).find("bad.csv:3") != std::string::npos);
    CHECK(std::string(e.what()).find("dur_us") != std::string::npos);
  }
  CHECK_THROWS_AS(read_trace(dir.write("nocol.csv", "stream,start_us,name\n7,0,k\n")), dbosim::InputError);
  CHECK_THROWS_AS(read_trace(dir.write("t.json", "{\"traceEvents\": 3}")), dbosim::InputError);
  CHECK_THROWS_AS(read_trace(dir.write("u.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"A0\"}]}")),
                  dbosim::InputError);
  CHECK_THROWS_AS(read_trace(dir.path() + "/absent.json"), dbosim::InputError);
}

TEST_CASE("validate trace: CLI compares a measured trace with a dbosim trace", "[quick]")
{
  dbosim::test::TempDir dir;
  const std::string bin = DBOSIM_BINARY;
  int rc                = std::system(
                     (bin + " run " + DBOSIM_SOURCE_DIR + "/scenarios/default.yaml --out " + dir.path() + " > /dev/null 2>&1")
                         .c_str());
  REQUIRE(rc == 0);
  const std::string cmd = bin + " validate --import-trace " + ref_csv + " --against " + dir.path() + "/trace.json";
  FILE* pipe            = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;)
    out.append(buf, n);
  CHECK(::pclose(pipe) == 0);
  INFO(out);
  for (const char* k : {"\nA0 ", "\nA1 ", "\nD ", "\nMLP ", "\nS ", "\nC "})
    CHECK(out.find(k) != std::string::npos);
  CHECK(out.find("dbosim/m") != std::string::npos);
}

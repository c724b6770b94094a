#include "RunShell.hpp"
#include "TempDir.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {
using dbosim::test::run_shell;
} // namespace

TEST_CASE("cli: --explain prints the terms behind one op's cost", "[quick]")
{
  dbosim::test::TempDir dir;
  int rc = 0;
  // the default scenario on the datasheet H200 (hwprofiles/h200.yaml is measured: its tables replace the roofline)
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  yaml.replace(yaml.find("hardware: h200"), 14,
               std::string("hardware: ") + DBOSIM_SOURCE_DIR + "/tests/data/calib/h200_datasheet.yaml");
  const std::string base =
      std::string(DBOSIM_BINARY) + " run " + dir.write("default.yaml", yaml) + " --out " + dir.path() + " --explain ";
  const std::string mlp = run_shell(base + "MLP 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(mlp.find("MoE layer MLP = ") != std::string::npos);
  // A datasheet profile has no tables: each kernel shows its roofline terms with the profile's figures.
  CHECK(mlp.find("experts_gate_up: roofline") != std::string::npos);
  CHECK(mlp.find("4.8e+12 B/s") != std::string::npos);
  CHECK(mlp.find("experts_down:") != std::string::npos);
  const std::string bad = run_shell(base + "Q 2>&1", &rc);
  CHECK(rc == 2);
  CHECK(bad.find("--explain") != std::string::npos);
}

/* dbosim tests — run --compare shows only the modes the scenario's all-to-all backend can run: on mori (no DBO, no
 * finalize_async) the overlap-off column alone, with a line for each mode left out. */
#include "RunShell.hpp"
#include "TempDir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <string>

using dbosim::test::run_shell;
using dbosim::test::TempDir;

TEST_CASE("cli: run --compare on a mori scenario has no DBO or async-combine column", "[slow]")
{
  TempDir dir;
  int rc = 0;
  const std::string text =
      run_shell(std::string(DBOSIM_BINARY) + " run " + DBOSIM_SOURCE_DIR +
                    "/scenarios/dsv3_decode_ep8_mi300x_mori.yaml --compare --out " + dir.path() + "/out 2>&1",
                &rc);
  REQUIRE(rc == 0);
  CHECK(text.find("--compare: no dbo column: the mori all-to-all backend has no DBO") != std::string::npos);
  CHECK(text.find("--compare: no async_combine column") != std::string::npos);
  std::ifstream in(dir.path() + "/out/summary.json");
  const auto summary = nlohmann::json::parse(std::string((std::istreambuf_iterator<char>(in)), {}));
  CHECK(summary.at("compare").contains("overlap_off"));
  CHECK_FALSE(summary.at("compare").contains("dbo"));
  CHECK_FALSE(summary.at("compare").contains("async_combine"));
}

#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace dbosim;

TEST_CASE("config::HwProfileLoader: sm_tables are read, and broken ones rejected with file, line and key", "[quick]")
{
  std::stringstream text;
  text << std::ifstream(std::string(DBOSIM_SOURCE_DIR) + "/tests/data/calib/h200_datasheet.yaml").rdbuf();
  const std::string table = "  - family: gemm_bf16\n"
                            "    dims: {k: 7168, n: 4096}\n"
                            "    sms: 112\n"
                            "    tokens: [16, 256]\n"
                            "    speed: [0.5, 0.9]\n"
                            "    source: \"test\"\n";
  const std::string good  = text.str() + "sm_tables:\n" + table;
  test::TempDir dir;
  {
    auto hw = load_hw_profile(dir.write("good.yaml", good));
    REQUIRE(hw.sm_tables.size() == 1);
    CHECK(hw.sm_tables[0].family == "gemm_bf16");
    CHECK(hw.sm_tables[0].dims.at("n") == 4096);
    CHECK(hw.sm_tables[0].sms == 112);
    CHECK(hw.sm_tables[0].speed_by_tokens.y == std::vector<double>{0.5, 0.9});
  }
  const std::string base = text.str();
  const int table_line   = static_cast<int>(std::count(base.begin(), base.end(), '\n')) + 2; // "  - family: ..."
  auto error_of          = [&](const std::string& from, const std::string& to, const std::string& extra = "") {
    std::string bad = good + extra;
    auto pos        = bad.rfind(from);
    REQUIRE(pos != std::string::npos);
    bad.replace(pos, from.size(), to);
    const std::string path = dir.write("bad.yaml", bad);
    try {
      load_hw_profile(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    FAIL("profile loaded but should not");
    return std::string();
  };
  const std::string sms_error = error_of("sms: 112", "sms: 200");
  CHECK(sms_error.find("sm_tables[0].sms: 200 is out of range") != std::string::npos);
  CHECK(sms_error.find("bad.yaml:" + std::to_string(table_line + 2)) != std::string::npos); // the sms line
  CHECK(error_of("speed: [0.5, 0.9]", "speed: [0.5]").find("sm_tables[0].speed: has 1 values but tokens has 2") !=
        std::string::npos);
  CHECK(error_of("speed: [0.5, 0.9]", "speed: [0, 0.9]").find("sm_tables[0].speed") != std::string::npos);
  CHECK(error_of("tokens: [16, 256]", "tokens: [256, 16]").find("sm_tables[0].tokens: must be strictly increasing") !=
        std::string::npos);
  CHECK(error_of("source: \"test\"", "source: \"test\"\n    sm: 3").find("sm_tables[0]") != std::string::npos);
  CHECK(error_of("source: \"test\"", "source: \"test\"", table)
            .find("sm_tables[1].sms: a second table for "
                  "gemm_bf16[k=7168,n=4096] at 112 SMs") != std::string::npos);
  CHECK(error_of("sm_tables:\n" + table, "sm_tables: 3\n").find("sm_tables: expected a list") != std::string::npos);
}

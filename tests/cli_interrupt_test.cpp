/* dbosim tests — an interrupted plan or sweep leaves nothing that looks finished (no points.csv, report or sweep.csv,
 * not even an earlier run's; a points.partial.csv that says which points ran) and exits 128 + signal; --resume runs
 * again a point whose summary is truncated. */
#include "RunShell.hpp"
#include "TempDir.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using dbosim::test::run_shell;
using dbosim::test::TempDir;
namespace fs = std::filesystem;

namespace {
std::string text_of(const std::string& path)
{
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string sweep_scenario(const std::string& values)
{
  return text_of(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/default.yaml") + "sweep:\n  workload.tokens_per_rank: [" +
         values + "]\n";
}

/** Starts `cmd` in the background, waits for `ready` to exist, sends `sig`, and returns "rc=N". */
std::string interrupt(const std::string& cmd, const std::string& ready, const std::string& sig)
{
  int rc = 0;
  return run_shell("(" + cmd + " & pid=$!; for i in $(seq 600); do sleep 0.1; [ -e " + ready +
                       " ] && break; done; kill -" + sig + " $pid; wait $pid; echo rc=$?)",
                   &rc);
}
} // namespace

TEST_CASE("cli: SIGTERM to a plan writes no points.csv or report, and points.partial.csv says which points ran",
          "[slow][plan]")
{
  TempDir dir;
  const std::string out = dir.path() + "/out";
  fs::create_directories(out);
  for (const char* f : {"points.csv", "report.md", "report.html"}) // an earlier run's: must not survive
    std::ofstream(out + "/" + f) << "earlier\n";
  const std::string res =
      interrupt(std::string(DBOSIM_BINARY) + " plan " + DBOSIM_SOURCE_DIR +
                    "/plans/dsv3_decode_h200_b200.yaml -j 1 --out " + out + " > " + dir.path() + "/log.txt 2>&1",
                out + "/ranks/0/sweep/points/0000/summary.json", "TERM");
  CHECK(res.find("rc=143") != std::string::npos);
  for (const char* f : {"points.csv", "report.md", "report.html"})
    CHECK_FALSE(fs::exists(out + "/" + f));
  const std::string partial = text_of(out + "/points.partial.csv");
  CHECK(partial.rfind("point,hardware,parallel.ep,", 0) == 0);
  CHECK(partial.find("\n0,h200,8,") != std::string::npos);
  CHECK(partial.find(",ok\n") != std::string::npos);
  CHECK(partial.find(",not run\n") != std::string::npos);
  CHECK(text_of(dir.path() + "/log.txt").find("dbosim plan: stopped by signal 15 (") != std::string::npos);
}

TEST_CASE("cli: an interrupted sweep leaves no sweep.csv, an earlier run's included", "[slow]")
{
  TempDir dir;
  const std::string out = dir.path() + "/out";
  fs::create_directories(out);
  std::ofstream(out + "/sweep.csv") << "earlier\n";
  std::string points;
  for (int t = 64; t < 64 + 2 * 300; t += 2)
    points += (points.empty() ? "" : ", ") + std::to_string(t);
  const std::string yaml = dir.write("s.yaml", sweep_scenario(points));
  const std::string res =
      interrupt(std::string(DBOSIM_BINARY) + " sweep " + yaml + " -j 1 --out " + out + " > /dev/null 2>&1",
                out + "/points/0000/summary.json", "INT");
  CHECK(res.find("rc=130") != std::string::npos);
  CHECK_FALSE(fs::exists(out + "/sweep.csv"));
}

TEST_CASE("cli: sweep --resume runs again a point whose summary is truncated", "[slow]")
{
  TempDir dir;
  const std::string out  = dir.path() + "/out";
  const std::string yaml = dir.write("s.yaml", sweep_scenario("64, 96"));
  const std::string exe  = DBOSIM_BINARY;
  int rc                 = 0;
  run_shell(exe + " sweep " + yaml + " -j 1 --out " + out + " > /dev/null 2>&1", &rc);
  REQUIRE(rc == 0);
  const std::string whole = text_of(out + "/points/0000/summary.json");
  std::ofstream(out + "/points/0000/summary.json") << whole.substr(0, whole.size() / 2); // cut mid-way
  const std::string err = run_shell(exe + " sweep " + yaml + " -j 1 --resume --out " + out + " 2>&1 >/dev/null", &rc);
  CHECK(rc == 0);
  CHECK(err.find("resuming: 1 of 2 points already finished") != std::string::npos);
  CHECK(nlohmann::json::parse(text_of(out + "/points/0000/summary.json")) == nlohmann::json::parse(whole));
  CHECK(text_of(out + "/sweep.csv").find("\n0,64,ok,") != std::string::npos);
}

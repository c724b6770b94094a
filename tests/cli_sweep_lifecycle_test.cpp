/* dbosim tests — a sweep's life cycle at the CLI: stale points of a larger earlier sweep removed, --resume keeping
 * finished points, every point checked before any runs, and SIGINT forwarded to the running points (none left
 * writing after the sweep exits). */
#include "RunShell.hpp"
#include "TempDir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using dbosim::test::run_shell;
using dbosim::test::TempDir;
namespace fs = std::filesystem;

namespace {
std::string sweep_scenario(const std::string& values)
{
  std::ifstream in(std::string(DBOSIM_SOURCE_DIR) + "/scenarios/default.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return yaml + "sweep:\n  workload.tokens_per_rank: [" + values + "]\n";
}
} // namespace

TEST_CASE("cli: sweep removes stale points, resumes finished ones, and checks points before running", "[slow]")
{
  TempDir dir;
  const std::string exe = DBOSIM_BINARY;
  const std::string out = dir.path() + "/out";
  int rc                = 0;
  run_shell(exe + " sweep " + dir.write("big.yaml", sweep_scenario("64, 96, 128")) + " -j 2 --out " + out + " 2>&1",
            &rc);
  REQUIRE(rc == 0);
  REQUIRE(fs::exists(out + "/points/0002/summary.json"));
  const std::string small = dir.write("small.yaml", sweep_scenario("64, 96"));
  run_shell(exe + " sweep " + small + " -j 2 --out " + out + " 2>&1", &rc);
  REQUIRE(rc == 0);
  CHECK(!fs::exists(out + "/points/0002")); // the larger sweep's third point is gone

  const auto before         = fs::last_write_time(out + "/points/0001/summary.json");
  const std::string resumed = run_shell(exe + " sweep " + small + " --resume --out " + out + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(resumed.find("resuming: 2 of 2 points already finished") != std::string::npos);
  CHECK(fs::last_write_time(out + "/points/0001/summary.json") == before);
  // A changed point is not "finished": it runs again.
  const std::string changed = dir.write("changed.yaml", sweep_scenario("64, 112"));
  const std::string rerun   = run_shell(exe + " sweep " + changed + " --resume --out " + out + " 2>&1", &rc);
  CHECK(rc == 0);
  CHECK(rerun.find("resuming: 1 of 2 points already finished") != std::string::npos);

  // A bad value is found before any point runs, at the sweep line.
  const std::string bad = dir.write("bad.yaml", sweep_scenario("64, 0"));
  const std::string err = run_shell(exe + " sweep " + bad + " --out " + dir.path() + "/bad 2>&1", &rc);
  CHECK(rc == 2);
  CHECK(err.find("dbosim: error: " + bad +
                 ":18:3: sweep: point 1 (workload.tokens_per_rank=0) is not a valid scenario:") == 0);
  CHECK(!fs::exists(dir.path() + "/bad/points/0000/summary.json"));
}

TEST_CASE("cli: SIGINT to a sweep reaches its running points, and none is left running", "[slow]")
{
  // Each point in its own process (simgrid), or many points per worker process (auto); the SM-resident backend
  // makes the auto workers start SimGrid children too.
  const std::string engine = GENERATE(std::string("simgrid"), std::string("auto"));
  TempDir dir;
  const std::string exe = DBOSIM_BINARY;
  const std::string out = dir.path() + "/out";
  std::string points;
  for (int t = 64; t < 64 + 2 * 600; t += 2)
    points += (points.empty() ? "" : ", ") + std::to_string(t);
  const std::string yaml =
      dir.write("s.yaml", sweep_scenario(points) + "  overlap.all2all_backend: [deepep_high_throughput]\n");
  int rc = 0;
  // Start the sweep, interrupt it once its first points run, then look for any point or worker process still alive.
  const std::string script = "(" + exe + " sweep " + yaml + " -j 2 --engine " + engine + " --out " + out + " 2>" +
                             dir.path() + "/err.txt & pid=$!; for i in $(seq 100); do sleep 0.1; [ -e " + out +
                             "/points/0000/log.txt ] && break; done; sleep 0.3; kill -INT $pid; wait $pid; echo rc=$?; "
                             "sleep 0.2; ps -eo args | grep -F -e '" +
                             out + "/points' -e '" + yaml + "' | grep -v grep | wc -l)";
  const std::string res = run_shell(script, &rc);
  CHECK(res.find("rc=130") != std::string::npos);
  CHECK(res.substr(res.rfind("rc=130") + 7).find_first_not_of(" \n0") == std::string::npos); // 0 left running
  std::ifstream err(dir.path() + "/err.txt");
  const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  CHECK(text.find("dbosim sweep: stopped by signal 2") != std::string::npos);
}

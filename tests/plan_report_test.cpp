/* dbosim tests — `dbosim plan` end to end on a 4-point plan: the report is self-contained and renders in headless
 * Chromium with every plot drawn and no console error (tests/plan_report_check.sh), the check catches a broken page,
 * and `mpirun -np 2` writes the same points.csv as one process. */
#include "TempDir.hpp"
#include "plan/MpiSession.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

using dbosim::test::TempDir;

namespace {
const std::string kPlan  = std::string(DBOSIM_SOURCE_DIR) + "/tests/data/plan/tiny_plan.yaml";
const std::string kCheck = std::string(DBOSIM_SOURCE_DIR) + "/tests/plan_report_check.sh";

std::string read(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int sh(const std::string& cmd)
{
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

int run_plan(const std::string& prefix, const std::string& out)
{
  return sh(prefix + std::string(DBOSIM_BINARY) + " plan " + kPlan + " --out " + out + " > " + out + ".log 2>&1");
}
} // namespace

TEST_CASE("plan: the report is self-contained and renders in headless Chromium", "[slow][plan]")
{
  TempDir dir;
  const std::string out = dir.path() + "/plan";
  REQUIRE(run_plan("", out) == 0);
  const std::string csv = read(out + "/points.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5); // header + 4 points
  CHECK(csv.find(",failed") == std::string::npos);
  const std::string html = read(out + "/report.html");
  CHECK(html.find("Recommended:") != std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("src=\"http") == std::string::npos); // opens offline: nothing to fetch
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  const std::string md = read(out + "/report.md");
  CHECK(md.find("## Recommendation") != std::string::npos);
  // The band from validate/baseline.yaml's MAPE, or "model error not yet measured" when there is none.
  const bool band = md.find("Uncertainty: the model's measured error") != std::string::npos ||
                    md.find("Uncertainty: model error not yet measured") != std::string::npos;
  CHECK(band);

  INFO("see " << dir.path() << "/check/console.log");
  CHECK(sh(kCheck + " " + out + "/report.html " + dir.path() + "/check 2> " + dir.path() + "/check.err") == 0);

  // The check fails on a page with a console error, and on a page whose plot lost its SVG.
  std::string broken = html;
  broken.replace(broken.find("</body>"), 7, "<script>console.error('plan report broken')</script></body>");
  std::ofstream(dir.path() + "/broken.html") << broken;
  CHECK(sh(kCheck + " " + dir.path() + "/broken.html " + dir.path() + "/check2 2> /dev/null") != 0);
  std::string no_plot = html;
  const auto fig      = no_plot.find("id=\"plot-frontier\"");
  REQUIRE(fig != std::string::npos);
  no_plot.replace(fig, no_plot.find("</figure>", fig) - fig, "id=\"plot-frontier\">");
  std::ofstream(dir.path() + "/no_plot.html") << no_plot;
  CHECK(sh(kCheck + " " + dir.path() + "/no_plot.html " + dir.path() + "/check3 2> /dev/null") != 0);
}

TEST_CASE("plan: mpirun -np 2 writes the same points.csv as one process", "[slow][plan]")
{
  if (!dbosim::plan::MpiSession::built_with_mpi())
    FAIL("dbosim was built without MPI: scripts/setup.sh installs openmpi-bin and libopenmpi-dev");
  TempDir dir;
  REQUIRE(run_plan("", dir.path() + "/one") == 0);
  REQUIRE(run_plan("mpirun --allow-run-as-root --oversubscribe -np 2 ", dir.path() + "/mpi") == 0);
  const std::string one = read(dir.path() + "/one/points.csv"), two = read(dir.path() + "/mpi/points.csv");
  CHECK(!one.empty());
  CHECK(one == two);
  // Both ranks ran points: rank 1's share is in its own folder.
  CHECK(read(dir.path() + "/mpi/ranks/1/shard.yaml").find("sweep:") != std::string::npos);
}

TEST_CASE("plan: -j 1 and -j 2 write byte-identical outputs", "[slow][plan]")
{
  // Every file the plan writes (points.csv, the reports, each point's scenario, summary and request table), except
  // the logs, which carry wall-clock times.
  TempDir dir;
  const std::string exe = DBOSIM_BINARY;
  for (const char* j : {"1", "2"})
    REQUIRE(sh(exe + " plan " + kPlan + " -j " + j + " --out " + dir.path() + "/j" + j + " > " + dir.path() + "/j" + j +
               ".log 2>&1") == 0);
  namespace fs = std::filesystem;
  int compared = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path() + "/j1")) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.ends_with(".log") || name == "log.txt")
      continue;
    const std::string rel = fs::relative(e.path(), dir.path() + "/j1").string();
    INFO(rel);
    REQUIRE(fs::exists(dir.path() + "/j2/" + rel));
    CHECK(read(e.path().string()) == read(dir.path() + "/j2/" + rel));
    ++compared;
  }
  CHECK(compared >= 4 + 3); // at least the 4 points' summaries, points.csv and both reports
  CHECK(read(dir.path() + "/j1/points.csv").find(",failed") == std::string::npos);
}

TEST_CASE("plan: under MTP the recommended point's timeline step runs 1 + k tokens per request", "[slow][plan]")
{
  TempDir dir;
  const std::string out = dir.path() + "/mtp";
  REQUIRE(sh(std::string(DBOSIM_BINARY) + " plan " + DBOSIM_SOURCE_DIR + "/tests/data/plan/tiny_plan_mtp.yaml --out " +
             out + " > " + out + ".log 2>&1") == 0);
  REQUIRE(std::filesystem::exists(out + "/timeline/summary.json")); // the step ran (an odd token count is refused)
  const std::string report = read(out + "/report.html");            // the timeline's caption
  const auto at            = report.find(" requests per DP rank");
  REQUIRE(at != std::string::npos);
  const int requests         = std::stoi(report.substr(report.rfind('(', at) + 1));
  const std::string scenario = read(out + "/timeline/scenario.yaml");
  CHECK(scenario.find("tokens_per_rank: " + std::to_string(2 * requests) + "\n") != std::string::npos);
}

/* The plan report's timeline: one rank's compute and comm streams. A cluster trace holds a process per traced rank;
 * the plot draws the straggler's (otherData.straggler_rank), else the lowest rank's, and its title says which. */
#include "TempDir.hpp"
#include "plan/PlanPlots.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

using dbosim::test::TempDir;
using nlohmann::json;

namespace {

json op(int pid, int tid, const char* name, double ts, double dur)
{
  return {{"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"name", name},
          {"ts", ts},
          {"dur", dur},
          {"args", {{"layer", 3}, {"ubatch", 0}}}};
}

/** Two ranks: rank 0 with two ops, rank 5 with three (its D longer). */
json two_ranks()
{
  json t = {{"traceEvents", json::array()}};
  t["traceEvents"].push_back(op(0, 1, "A0", 0, 10));
  t["traceEvents"].push_back(op(0, 2, "D", 10, 5));
  t["traceEvents"].push_back(op(5, 1, "A0", 0, 12));
  t["traceEvents"].push_back(op(5, 2, "D", 12, 40));
  t["traceEvents"].push_back(op(5, 1, "MLP", 52, 8));
  return t;
}

std::string read(const std::string& path)
{
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

long lines(const std::string& text) { return static_cast<long>(std::count(text.begin(), text.end(), '\n')); }

} // namespace

TEST_CASE("plan::timeline_plot: a cluster trace is drawn for the straggler's rank only", "[quick][plan]")
{
  TempDir dir;
  json t                           = two_ranks();
  t["otherData"]["straggler_rank"] = 5;
  dbosim::plan::timeline_plot(dir.path(), t, 2, "step");
  CHECK(lines(read(dir.path() + "/timeline_ub0.dat")) == 3); // rank 5's three ops, not rank 0's
  CHECK(read(dir.path() + "/timeline.gp").find("step (rank 5 of the 2 traced)") != std::string::npos);
}

TEST_CASE("plan::timeline_plot: without a straggler named the lowest rank is drawn, and one rank keeps its title",
          "[quick][plan]")
{
  TempDir dir;
  dbosim::plan::timeline_plot(dir.path(), two_ranks(), 2, "step");
  CHECK(lines(read(dir.path() + "/timeline_ub0.dat")) == 2);
  CHECK(read(dir.path() + "/timeline.gp").find("step (rank 0 of the 2 traced)") != std::string::npos);

  json one = {{"traceEvents", json::array({op(0, 1, "A0", 0, 10), op(0, 2, "D", 10, 5)})}};
  TempDir dir1;
  dbosim::plan::timeline_plot(dir1.path(), one, 2, "step");
  CHECK(lines(read(dir1.path() + "/timeline_ub0.dat")) == 2);
  CHECK(read(dir1.path() + "/timeline.gp").find("rank 0 of") == std::string::npos);
}

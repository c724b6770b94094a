/* dbosim — `dbosim plan PLAN.yaml`: evaluate every point of a capacity plan (through the sweep runner: one process
 * per point, at most -j at once), keep those meeting the SLOs, find the fewest GPUs per hardware and the Pareto
 * frontier, and write DIR/{points.csv, report.md, report.html, plots/}. Under mpirun each rank runs its share. */
#pragma once
#include <string>

namespace dbosim::cli {

struct PlanOptions {
  std::string plan;
  std::string out_dir = "out/plan";
  int jobs            = 0;      ///< points at once per rank; 0: its bound cores, else the machine's shared by its ranks
  std::string engine  = "auto"; ///< the points' engine (SweepOptions::engine)
};

int plan_command(const PlanOptions& opt);

} // namespace dbosim::cli

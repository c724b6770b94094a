/* dbosim — a StepTimeOracle over the timeline engine. SimGrid runs one simulation per process, so each step shape
 * is simulated in a forked child (the scenario with the shape's workload, DP padding to the shape's tokens); up to
 * `jobs` children run at once and pass their StepTime back through a pipe. */
#pragma once
#include "config/Scenario.hpp"
#include "serving/StepTimeOracle.hpp"

#include <string>
#include <vector>

namespace dbosim::serving {

class EngineOracle : public StepTimeOracle {
public:
  /** @brief `jobs` 0: the machine's cores, or DBOSIM_ORACLE_JOBS when set (the sweep runner sets 1 per point). */
  explicit EngineOracle(const Scenario& s, int jobs = 0, std::vector<std::string> simgrid_args = {});
  std::vector<StepTime> simulate(const std::vector<StepKey>& keys) override;
  /** @brief From the step's plan, in this process (no SimGrid). */
  RankWork rank_work(const StepKey& key) override;
  /** @brief Shapes simulated so far (child processes started). */
  long simulated() const { return simulated_; }

private:
  const Scenario& scenario_;
  int jobs_;
  std::vector<std::string> simgrid_args_;
  long simulated_ = 0;
};

/** @brief One rank's own work at `key` (RankWork) from the plan the engine would run: no SimGrid. */
RankWork rank_work_here(const Scenario& s, const StepKey& key);

/** @brief One step of `s` at `key`, in this process (starts SimGrid: once per process). */
StepTime simulate_step_here(const Scenario& s, const StepKey& key, const std::vector<std::string>& simgrid_args = {});

} // namespace dbosim::serving

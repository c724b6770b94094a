/* dbosim — the step-time cache: bucketed step shape -> the engine's StepTime. A serving run of thousands of steps
 * simulates each distinct bucket once. */
#pragma once
#include "serving/StepKey.hpp"

#include <map>

namespace dbosim::serving {

class StepCache {
public:
  /** @brief The cached time of a bucketed key, or nullptr. Counts lookups and hits. */
  const StepTime* find(const StepKey& bucketed);
  void insert(const StepKey& bucketed, const StepTime& t) { entries_[bucketed] = t; }
  /** @brief The cached key nearest to `key` (same phase first; log-distance in tokens, batch and context), or
   *  nullptr when empty. Used only to guess the shapes a run will need before they are simulated. */
  const StepTime* nearest(const StepKey& key) const;
  std::size_t size() const { return entries_.size(); }
  /** @brief Each rank's own work by exact key (StepTimeOracle::rank_work), computed once per key. */
  std::map<StepKey, RankWork> rank_work;
  const std::map<StepKey, StepTime>& entries() const { return entries_; }
  long lookups = 0;
  long hits    = 0;

private:
  std::map<StepKey, StepTime> entries_;
};

} // namespace dbosim::serving

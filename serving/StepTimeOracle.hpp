/* dbosim — the serving layer's one view of the timeline engine: step shape -> step time and per-op breakdown.
 * The scheduler never sees SimGrid; tests plug in a closed-form oracle. */
#pragma once
#include "serving/StepKey.hpp"

#include <vector>

namespace dbosim::serving {

class StepTimeOracle {
public:
  virtual ~StepTimeOracle() = default;
  /** @brief Times of `keys`, in order. An implementation may simulate them in parallel. */
  virtual std::vector<StepTime> simulate(const std::vector<StepKey>& keys) = 0;
  /** @brief Whether simulate() runs many keys at once faster than one at a time (in parallel): then a serving run
   *  guesses its misses and simulates them in batches (run_serving); otherwise it simulates each where it occurs, in
   *  one pass, with the same result. Default: yes. */
  virtual bool batches_in_parallel() const { return true; }
  /** @brief One rank's own work at `key` (exact, not bucketed), from the cost models alone (no engine run): what
   *  picks the step's slowest rank and prices the others' spin. Default: none known (no straggler, the busiest
   *  rank by tokens sets the step). */
  virtual RankWork rank_work(const StepKey& key)
  {
    (void)key;
    return {};
  }
};

} // namespace dbosim::serving

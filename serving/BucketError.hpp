/* dbosim — how much the step-time cache's buckets cost in accuracy: a sample of the run's exact step shapes is
 * simulated unbucketed and compared with the bucket's time. */
#pragma once
#include "serving/ServingSim.hpp"

#include <nlohmann/json.hpp>

namespace dbosim::serving {

/** @brief Picks up to `samples` distinct exact shapes that differ from their bucket (evenly over the list sorted by
 *  how many steps used them), simulates them, and reports max and mean |bucket - exact| / exact in percent, the
 *  step-weighted mean, and each sample. */
nlohmann::ordered_json measure_bucket_error(const ServingResult& r, const StepCache& cache, StepTimeOracle& oracle,
                                            int samples);

} // namespace dbosim::serving

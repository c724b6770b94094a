#include "serving/BucketError.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace dbosim::serving {

nlohmann::ordered_json measure_bucket_error(const ServingResult& r, const StepCache& cache, StepTimeOracle& oracle,
                                            int samples)
{
  std::map<StepKey, std::pair<long, StepKey>> uses; // exact -> (steps, bucket)
  long exact_steps = 0;
  for (const StepRecord& s : r.steps) {
    if (s.exact == s.bucketed) {
      ++exact_steps;
      continue;
    }
    auto& u = uses[s.exact];
    u.first += 1;
    u.second = s.bucketed;
  }
  std::vector<std::pair<StepKey, std::pair<long, StepKey>>> list(uses.begin(), uses.end());
  std::stable_sort(list.begin(), list.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::vector<std::size_t> pick;
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(std::max(samples, 0)), list.size());
  for (std::size_t i = 0; i < n; ++i)
    pick.push_back(i * list.size() / n);
  std::vector<StepKey> keys;
  for (std::size_t i : pick)
    keys.push_back(list[i].first);
  const std::vector<StepTime> exact = oracle.simulate(keys);

  nlohmann::ordered_json out;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  double max_pct = 0, sum_pct = 0, weighted = 0;
  long weight = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const auto& [steps, bucket] = list[pick[k]].second;
    const double bucket_us      = cache.entries().at(bucket).step_us;
    const double pct            = 100.0 * std::abs(bucket_us - exact[k].step_us) / exact[k].step_us;
    max_pct                     = std::max(max_pct, pct);
    sum_pct += pct;
    weighted += pct * double(steps);
    weight += steps;
    rows.push_back({{"exact", keys[k].to_string()},
                    {"bucket", bucket.to_string()},
                    {"steps", steps},
                    {"exact_us", exact[k].step_us},
                    {"bucket_us", bucket_us},
                    {"error_pct", pct}});
  }
  out["steps_on_exact_shapes"]    = exact_steps;
  out["distinct_bucketed_shapes"] = uses.size();
  out["samples"]                  = keys.size();
  out["max_error_pct"]            = max_pct;
  out["mean_error_pct"]           = keys.empty() ? 0 : sum_pct / double(keys.size());
  out["step_weighted_error_pct"]  = weight > 0 ? weighted / double(weight) : 0;
  out["sampled"]                  = rows;
  return out;
}

} // namespace dbosim::serving

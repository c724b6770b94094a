#include "serving/StepCache.hpp"

#include <cmath>
#include <limits>

namespace dbosim::serving {

const StepTime* StepCache::find(const StepKey& bucketed)
{
  ++lookups;
  auto it = entries_.find(bucketed);
  if (it == entries_.end())
    return nullptr;
  ++hits;
  return &it->second;
}

const StepTime* StepCache::nearest(const StepKey& key) const
{
  auto dist            = [](int a, int b) { return std::abs(std::log2(1.0 + a) - std::log2(1.0 + b)); };
  const StepTime* best = nullptr;
  double best_d        = std::numeric_limits<double>::infinity();
  for (const auto& [k, t] : entries_) {
    const double d = (k.phase != key.phase ? 100.0 : 0.0) + (k.dp_unsplit != key.dp_unsplit ? 10.0 : 0.0) +
                     dist(k.tokens, key.tokens) + dist(k.batch, key.batch) + dist(k.context_len, key.context_len) +
                     dist(k.decode_batch, key.decode_batch) + dist(k.decode_context_len, key.decode_context_len);
    if (d < best_d) {
      best_d = d;
      best   = &t;
    }
  }
  return best;
}

} // namespace dbosim::serving

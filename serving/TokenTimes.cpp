#include "serving/TokenTimes.hpp"

#include "base/InputError.hpp"

#include <algorithm>
#include <cmath>

namespace dbosim::serving {

void TokenTimes::add(const StepTick& t)
{
  ++chunks_;
  if (!runs_.empty()) {
    TokenRun& back = runs_.back();
    if (back.group == t.group && back.first + back.count == t.index) {
      ++back.count;
      return;
    }
  }
  runs_.push_back({t.index, 1, t.group});
}

WeightedSample::WeightedSample(std::vector<std::pair<double, long>> pairs)
{
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [v, n] : pairs) {
    if (n <= 0)
      continue;
    if (!sorted_.empty() && sorted_.back().first == v)
      sorted_.back().second += n;
    else {
      below_.push_back(size_);
      sorted_.emplace_back(v, n);
    }
    size_ += n;
  }
}

double WeightedSample::nth(long k) const
{
  if (k < 0 || k >= size_)
    throw InternalError("WeightedSample::nth: index out of range");
  // The last entry with fewer than k + 1 values before it holds the k-th.
  const auto it = std::upper_bound(below_.begin(), below_.end(), k);
  return sorted_[static_cast<std::size_t>(it - below_.begin()) - 1].first;
}

double WeightedSample::percentile(double pct) const
{
  if (size_ == 0)
    return 0;
  // percentile_of_sorted's arithmetic on the list this stands for.
  const double rank = pct / 100.0 * double(size_ - 1);
  const auto lo     = static_cast<long>(std::floor(rank));
  const long hi     = std::min(lo + 1, size_ - 1);
  const double vlo = nth(lo), vhi = nth(hi);
  return vlo + (vhi - vlo) * (rank - double(lo));
}

} // namespace dbosim::serving

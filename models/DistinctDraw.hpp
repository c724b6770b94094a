/* dbosim — weighted sampling without replacement that always ends: k distinct items, each drawn with probability
 * proportional to its weight among the items not yet drawn (sequential draws renormalised over the rest). A draw
 * first tries the cumulative table a bounded number of times (cheap when the rest holds most of the weight) and
 * then scans the remaining weights exactly, so an extreme distribution (Zipf alpha 8, a weight of 1e-300) costs at
 * most O(items) per pick instead of an unbounded redraw. Deterministic for a generator state. */
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace dbosim::models {

/** @brief A double in [0, 1) from the top 53 bits of one 64-bit draw (portable: the mapping is ours). */
inline double uniform01(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

/** @brief Draws k distinct indices from fixed non-negative weights. */
class DistinctDraw {
public:
  /** Redraws from the cumulative table before the exact scan of the remaining weights. */
  static constexpr int max_redraws = 64;

  /** @throws std::invalid_argument when a weight is negative or not finite, or none is positive. */
  explicit DistinctDraw(std::vector<double> weights);

  /** @brief Replaces `out` with k distinct indices of positive weight, in draw order; with `allowed` (one flag per
   *  item), only among the flagged ones. @throws std::invalid_argument when fewer than k items are eligible. */
  void draw(int k, std::mt19937_64& g, std::vector<int>& out, const std::vector<unsigned char>* allowed = nullptr);

  int size() const { return static_cast<int>(weights_.size()); }
  /** @brief Items with a positive weight. */
  int positive() const { return positive_; }

private:
  /** The first index whose cumulative weight exceeds x (cdf_.size() if none): std::upper_bound's. */
  std::size_t first_above(double x) const;
  bool eligible(int i, const std::vector<unsigned char>* allowed) const;
  int pick_exact(double u, const std::vector<unsigned char>* allowed) const;

  std::vector<double> weights_;
  std::vector<double> cdf_; ///< inclusive prefix sums of weights_
  int positive_ = 0;
  std::vector<std::uint64_t> taken_; ///< taken_[i] == stamp_: item i already drawn in this draw()
  std::uint64_t stamp_ = 0;
};

} // namespace dbosim::models

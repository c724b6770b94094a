#include "models/DistinctDraw.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace dbosim::models {

DistinctDraw::DistinctDraw(std::vector<double> weights)
    : weights_(std::move(weights)), cdf_(weights_.size()), taken_(weights_.size(), 0)
{
  for (double w : weights_) {
    if (!(w >= 0) || !std::isfinite(w))
      throw std::invalid_argument("sampling weights must be finite and >= 0");
    positive_ += w > 0 ? 1 : 0;
  }
  if (positive_ == 0)
    throw std::invalid_argument("sampling weights must have a positive sum");
  std::partial_sum(weights_.begin(), weights_.end(), cdf_.begin());
}

std::size_t DistinctDraw::first_above(double x) const
{
  // std::upper_bound's index, found without a data-dependent branch (the halving step is a conditional move): the
  // draws' comparisons are coin flips that a branch predictor misses half the time.
  const double* base = cdf_.data();
  std::size_t n      = cdf_.size();
  while (n > 1) {
    const std::size_t half = n / 2;
    base                   = base[half] <= x ? base + half : base;
    n -= half;
  }
  return static_cast<std::size_t>(base - cdf_.data()) + (*base <= x ? 1 : 0);
}

bool DistinctDraw::eligible(int i, const std::vector<unsigned char>* allowed) const
{
  return weights_[i] > 0 && taken_[i] != stamp_ && (!allowed || (*allowed)[i]);
}

int DistinctDraw::pick_exact(double u, const std::vector<unsigned char>* allowed) const
{
  // Summed afresh (not total minus the drawn weights): no cancellation when the rest is tiny next to the drawn.
  double rest = 0;
  int last    = -1;
  for (int i = 0; i < size(); ++i)
    if (eligible(i, allowed)) {
      rest += weights_[i];
      last = i;
    }
  if (last < 0)
    return -1;
  const double x = u * rest;
  double acc     = 0;
  for (int i = 0; i < last; ++i)
    if (eligible(i, allowed)) {
      acc += weights_[i];
      if (x < acc)
        return i;
    }
  return last; // u·rest rounds to the total: the last eligible item
}

void DistinctDraw::draw(int k, std::mt19937_64& g, std::vector<int>& out, const std::vector<unsigned char>* allowed)
{
  out.clear();
  if (k <= 0)
    return;
  if (allowed && allowed->size() != weights_.size())
    throw std::invalid_argument("DistinctDraw: the allowed mask has the wrong size");
  if (++stamp_ == 0) { // wrapped (after 2^64 draws): reset the marks
    std::fill(taken_.begin(), taken_.end(), 0);
    stamp_ = 1;
  }
  const double total = cdf_.back();
  while (static_cast<int>(out.size()) < k) {
    int item = -1;
    for (int t = 0; t < max_redraws && item < 0; ++t) {
      const double x = uniform01(g) * total;
      const int i    = static_cast<int>(std::min<std::size_t>(first_above(x), weights_.size() - 1));
      if (eligible(i, allowed))
        item = i;
    }
    if (item < 0)
      item = pick_exact(uniform01(g), allowed);
    if (item < 0)
      throw std::invalid_argument(
          fmt::format("cannot draw {} distinct items: only {} have a positive weight", k, out.size()));
    taken_[item] = stamp_;
    out.push_back(item);
  }
}

} // namespace dbosim::models

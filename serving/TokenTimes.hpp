/* dbosim — a serving run's output-token times in memory that grows with steps and requests, not with tokens.
 *
 * Every token streams at the end of a step, so its time is a reading of its deployment's clock (StepClock) and a
 * request's token times are runs of consecutive steps (TokenTimes): one run while it streams a token every step, a new
 * one after a step without a token (a preemption, a hand-over to the decode deployment). Every inter-token gap (ITL)
 * is then the difference of two clock readings, the same double the simulator would have stored, and the run's
 * multiset of gaps is at most one (gap, count) per step plus one per run (WeightedSample): its percentiles are exactly
 * those of the sorted list of every gap. */
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace dbosim::serving {

/** @brief A step's place on its deployment's clock: the deployment (0: colocated or prefill, 1: decode) and the
 *  step's number among that deployment's steps. */
struct StepTick {
  int group  = 0;
  long index = 0;
};

/** @brief Every deployment's clock reading at the end of each of its steps, in the order they ran (seconds). */
struct StepClock {
  std::vector<std::vector<double>> end_s; ///< [deployment][step]
  double at(const StepTick& t) const
  {
    return end_s[static_cast<std::size_t>(t.group)][static_cast<std::size_t>(t.index)];
  }
};

/** @brief Tokens streamed at `count` consecutive steps of deployment `group`, the first at step `first`. */
struct TokenRun {
  long first = 0;
  int count  = 0;
  int group  = 0;
};

/** @brief A request's token times (one per streamed chunk: under MTP a step's accepted tokens stream as one). */
class TokenTimes {
public:
  /** @brief A chunk streamed at the end of step `t` (later than the last one). */
  void add(const StepTick& t);
  /** @brief The chunks streamed, and the gaps between consecutive ones (ITL samples). */
  long chunks() const { return chunks_; }
  long gaps() const { return chunks_ > 0 ? chunks_ - 1 : 0; }
  const std::vector<TokenRun>& runs() const { return runs_; }
  /** @brief Calls f(gap_s) for every gap in time order: the later token's clock reading minus the earlier's. */
  template <class F> void for_each_gap(const StepClock& clock, F&& f) const
  {
    bool any = false;
    StepTick last;
    for (const TokenRun& run : runs_)
      for (long k = 0; k < run.count; ++k) {
        const StepTick t{run.group, run.first + k};
        if (any)
          f(clock.at(t) - clock.at(last));
        last = t;
        any  = true;
      }
  }

private:
  std::vector<TokenRun> runs_;
  long chunks_ = 0;
};

/** @brief A multiset of values as (value, count), ascending and merged: the list it stands for, sorted. */
class WeightedSample {
public:
  WeightedSample() = default;
  /** @brief From (value, count) pairs in any order; pairs of equal value merge, counts of 0 are dropped. */
  explicit WeightedSample(std::vector<std::pair<double, long>> pairs);
  long size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /** @brief The distinct values kept (what the memory grows with). */
  std::size_t distinct() const { return sorted_.size(); }
  /** @brief The k-th smallest of the list (0-based). */
  double nth(long k) const;
  /** @brief numpy.percentile's default of the list (percentile_of_sorted's rule and arithmetic); 0 for none. */
  double percentile(double pct) const;

private:
  std::vector<std::pair<double, long>> sorted_;
  std::vector<long> below_; ///< values before sorted_[i] in the list
  long size_ = 0;
};

/** @brief Every inter-token gap of `requests`, times `scale` (1e3: ms), as a weighted sample: one entry per step
 *  in which some request streamed its next chunk one step after its last, plus one per other gap (a run's start). */
template <class Requests, class TimesOf>
WeightedSample gap_sample(const StepClock& clock, const Requests& requests, TimesOf times_of, double scale)
{
  std::vector<std::vector<long>> starts(clock.end_s.size()); // difference array over each deployment's steps
  for (std::size_t g = 0; g < clock.end_s.size(); ++g)
    starts[g].assign(clock.end_s[g].size() + 1, 0);
  std::vector<std::pair<double, long>> pairs;
  for (const auto& q : requests) {
    const TokenTimes& t = times_of(q);
    StepTick last{-1, 0};
    for (const TokenRun& run : t.runs()) {
      const StepTick first{run.group, run.first};
      if (last.group >= 0)
        pairs.emplace_back((clock.at(first) - clock.at(last)) * scale, 1);
      if (run.count > 1) { // gaps at steps first+1 .. first+count-1, each a step after the previous token
        auto& d = starts[static_cast<std::size_t>(run.group)];
        ++d[static_cast<std::size_t>(run.first + 1)];
        --d[static_cast<std::size_t>(run.first + run.count)];
      }
      last = {run.group, run.first + run.count - 1};
    }
  }
  for (std::size_t g = 0; g < clock.end_s.size(); ++g) {
    long open = 0;
    for (std::size_t i = 1; i < clock.end_s[g].size(); ++i) {
      open += starts[g][i];
      if (open > 0)
        pairs.emplace_back((clock.end_s[g][i] - clock.end_s[g][i - 1]) * scale, open);
    }
  }
  return WeightedSample(std::move(pairs));
}

} // namespace dbosim::serving

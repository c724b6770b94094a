/* dbosim tests — a closed-form step-time oracle and a small serving setup, so scheduler tests need no SimGrid. */
#pragma once
#include "serving/ServingMetrics.hpp"
#include "serving/ServingSim.hpp"
#include "serving/StepTimeOracle.hpp"

namespace dbosim::test {

/** step_us = base + per_token × tokens + per_kv × batch × context (prefill: per_token × 4); counts its calls.
 *  `parallel`: what batches_in_parallel() answers (a serving run then guesses its misses and simulates them in
 *  batches). */
class ClosedFormOracle : public serving::StepTimeOracle {
public:
  double base_us = 1000, per_token_us = 10, per_kv_us = 0.01;
  long calls    = 0;
  bool parallel = true;
  bool batches_in_parallel() const override { return parallel; }
  double time_us(const serving::StepKey& k) const
  {
    const double tok = k.phase == models::Phase::prefill ? 4 * per_token_us : per_token_us;
    return base_us + tok * k.tokens + per_kv_us * k.batch * k.context_len;
  }
  std::vector<serving::StepTime> simulate(const std::vector<serving::StepKey>& keys) override
  {
    std::vector<serving::StepTime> out;
    for (const auto& k : keys) {
      ++calls;
      serving::StepTime t;
      t.step_us = time_us(k);
      out.push_back(t);
    }
    return out;
  }
};

inline serving::ServingParams small_params(int dp = 1, long blocks = 1 << 20)
{
  serving::ServingParams p;
  p.dp                 = dp;
  p.gpus               = dp;
  p.kv_blocks_per_rank = blocks;
  p.host_gap_us        = 8;
  return p;
}

inline std::vector<serving::Request> fixed_requests(int n, int input, int output, double gap_s = 0)
{
  std::vector<serving::Request> r;
  for (int i = 0; i < n; ++i)
    r.push_back({i, gap_s * i, input, output});
  return r;
}

} // namespace dbosim::test

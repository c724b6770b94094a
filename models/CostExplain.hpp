/* dbosim — whether the cost functions write their explanations: KernelTime::method, OpCost::method, the kernels'
 * names, shapes and sources in OpCost::parts, KernelWork::shape. On by default (`dbosim run --explain`, summary.json's
 * costs, error messages); a serving run prices every DP rank's exact shape at every step (thousands of op costs that
 * nobody reads the text of) and turns them off for that scope with QuietCosts. The numbers are the same either way
 * (tests/opcost_quiet_test.cpp). Per thread. */
#pragma once

namespace dbosim::models {

/** @brief True unless a QuietCosts is alive on this thread. */
bool cost_explanations();

/** @brief For its lifetime, the cost functions on this thread skip their explanation text. */
class QuietCosts {
public:
  QuietCosts();
  ~QuietCosts();
  QuietCosts(const QuietCosts&)            = delete;
  QuietCosts& operator=(const QuietCosts&) = delete;

private:
  bool before_;
};

} // namespace dbosim::models

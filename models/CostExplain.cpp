#include "models/CostExplain.hpp"

namespace dbosim::models {

namespace {
thread_local bool explaining = true;
}

bool cost_explanations() { return explaining; }

QuietCosts::QuietCosts() : before_(explaining) { explaining = false; }

QuietCosts::~QuietCosts() { explaining = before_; }

} // namespace dbosim::models

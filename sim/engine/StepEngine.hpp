/* dbosim — which engine replays a step. SimGrid (TimelineEngine, ClusterEngine::run) is the reference; the exact
 * max-plus replay (ClusterEngine::replay) gives the same records when nothing inside a rank is shared (no comm kernel
 * holds SMs, the host never blocks on a stream) and runs any number of times in one process; `auto` takes the replay
 * where it is exact and SimGrid, in a forked child, where it is not, so that a sweep or a plan evaluates many points
 * in one process whatever their backend. */
#pragma once
#include "config/SimEngineNames.hpp"
#include "sim/plan/StepPlan.hpp"

#include <string>

namespace dbosim::sim {

/** @brief Why the max-plus replay is not exact for `plan` (a comm kernel holds SMs beside compute, or the host
 *  synchronizes after a collective), or empty when it is. */
std::string replay_inexact_reason(const StepPlan& plan);

/** @brief Where the replay is asked for (--engine replay) but not exact: an InputError naming `what` (the option or
 *  the file) and why. */
[[noreturn]] void refuse_inexact_replay(const std::string& what, const std::string& why);

} // namespace dbosim::sim

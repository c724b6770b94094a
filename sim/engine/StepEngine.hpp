/* dbosim — which engine replays a step. SimGrid (TimelineEngine, ClusterEngine::run) is the reference; the exact
 * max-plus replay (ClusterEngine::replay) gives the same records when nothing inside a rank is shared (no comm kernel
 * holds SMs, the host never blocks on a stream) and runs any number of times in one process; `auto` takes the replay
 * where it is exact and SimGrid, in a forked child, where it is not, so that a sweep or a plan evaluates many points
 * in one process whatever their backend. */
#pragma once
#include "sim/plan/StepPlan.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dbosim::sim {

enum class EngineKind {
  simgrid,   ///< SimGrid in this process (one simulation per process)
  replay,    ///< the max-plus replay; an input error where it is not exact
  automatic, ///< the replay where it is exact, else SimGrid in a forked child
};

/** @brief "simgrid", "replay", "auto". */
const char* engine_name(EngineKind e);
/** @brief The engine named `name` (one of engine_name's), else nothing. */
std::optional<EngineKind> parse_engine(const std::string& name);
/** @brief The names, for help texts and errors: "simgrid|replay|auto". */
std::string engine_names();
/** @brief The names as a list (the CLI's set of valid values). */
std::vector<std::string> engine_name_list();
/** @brief The engine a `--engine` value names; an InputError naming `--engine` and the valid names otherwise. */
EngineKind engine_from_option(const std::string& value);

/** @brief Why the max-plus replay is not exact for `plan` (a comm kernel holds SMs beside compute, or the host
 *  synchronizes after a collective), or empty when it is. */
std::string replay_inexact_reason(const StepPlan& plan);

/** @brief Where the replay is asked for (--engine replay) but not exact: an InputError naming `what` (the option or
 *  the file) and why. */
[[noreturn]] void refuse_inexact_replay(const std::string& what, const std::string& why);

} // namespace dbosim::sim

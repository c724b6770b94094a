/* dbosim — the engines that can replay a step (sim/engine/StepEngine says which runs where), by the names the
 * `--engine` option and the help texts use. Free of SimGrid types, so that the CLI reads and lists them. */
#pragma once
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

} // namespace dbosim::sim

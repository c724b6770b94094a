/* dbosim — reads and validates a scenario YAML through the declared parameter table (config/ScenarioParams). */
#pragma once
#include "config/Scenario.hpp"

#include <string>

namespace dbosim {

/** @brief Loads `path`, applies declared defaults, checks types, ranges and the rules vLLM enforces.
 *  @throws InputError naming file:line:col, the key and the valid values. */
Scenario load_scenario(const std::string& path);

} // namespace dbosim

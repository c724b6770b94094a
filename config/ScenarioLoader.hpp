/* dbosim — reads and validates a scenario YAML through the declared parameter table (config/ScenarioParams). */
#pragma once
#include "config/Scenario.hpp"

#include <string>

namespace YAML {
class Node;
}

namespace dbosim {

/** @brief Loads `path`, applies declared defaults, checks types, ranges and the rules vLLM enforces.
 *  @throws InputError naming file:line:col, the key and the valid values. */
Scenario load_scenario(const std::string& path);

/** @brief load_scenario of a scenario already parsed (a sweep's point built in memory): `path` names it in errors and
 *  gives Scenario::file and name, as the file's path does; the same checks, the same Scenario. */
Scenario load_scenario_node(const YAML::Node& file, const std::string& path);

/** @brief load_scenario_node without Scenario::step_fingerprint (left empty: the scenario shares no step shapes), for
 *  a caller that runs one step of it and shares nothing: the same checks, the same Scenario otherwise. */
Scenario load_scenario_unshared(const YAML::Node& file, const std::string& path);

} // namespace dbosim

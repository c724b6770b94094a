/* dbosim — SimGrid start-up options: the project's defaults go first in argv so the user's --cfg still wins. */
#pragma once
#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief argv for simgrid::s4u::Engine: program name, dbosim's defaults (CM02 network model without TCP gamma
 *  and cross traffic, quiet xbt_cfg; thread contexts under sanitizers), then the user's `extra` options. */
std::vector<std::string> engine_args(const std::string& program, const std::vector<std::string>& extra);

} // namespace dbosim::sim

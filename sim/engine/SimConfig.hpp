/* dbosim — SimGrid start-up options: the project's defaults go first in argv so the user's --cfg still wins. */
#pragma once
#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief argv for simgrid::s4u::Engine: program name, dbosim's defaults (CM02 network model without TCP gamma
 *  and cross traffic, quiet xbt_cfg; thread contexts under sanitizers), then the user's `extra` options. */
std::vector<std::string> engine_args(const std::string& program, const std::vector<std::string>& extra);

/** @brief Why SimGrid would refuse `extra` (empty when it takes them): each must be --cfg=KEY:VALUE or --log=SPEC
 *  (others, such as --help, make SimGrid print and exit); a --cfg key must be one of the table in
 * config/SimgridOptions.cpp, a numeric value inside its range there (values that crash, deadlock or out-round the
 * engine); and a probe process starts an engine with them on a one-host platform and runs it, so an option that aborts
 * SimGrid (an unknown model, a bad log category) is found here, with SimGrid's own message, instead of aborting the
 * run. */
std::string simgrid_args_problem(const std::vector<std::string>& extra);

} // namespace dbosim::sim

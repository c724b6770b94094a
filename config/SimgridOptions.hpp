/* dbosim — the SimGrid options dbosim passes on (`--simgrid=`): their syntax, the table of --cfg keys it takes and
 * the range of each numeric one. Free of SimGrid types: sim/engine/SimConfig probes what a table cannot check. */
#pragma once
#include <string>
#include <vector>

namespace dbosim::sim {

/** @brief Why dbosim does not pass `extra` on to SimGrid, as far as its table says (empty when it may): each must be
 *  --cfg=KEY:VALUE or --log=SPEC (others, such as --help, make SimGrid print and exit); a --cfg key must be one of the
 *  table in SimgridOptions.cpp, a numeric value inside its range there (values that crash, deadlock or out-round the
 *  engine). A name-valued key and a --log spec are left to sim::simgrid_args_problem's probe. */
std::string simgrid_option_problem(const std::vector<std::string>& extra);

} // namespace dbosim::sim

/* dbosim — this program's own path, for the commands that run `dbosim run` in a child (sweep, plan, validate's e2e). */
#pragma once
#include <string>

namespace dbosim {

/** @brief The running program (/proc/self/exe). InternalError naming @p command ("dbosim sweep") when it cannot be
 *  read. */
std::string self_exe(const std::string& command);

} // namespace dbosim

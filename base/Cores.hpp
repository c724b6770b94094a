/* dbosim — how many cores this process may run on: its CPU affinity (what taskset, a batch scheduler or mpirun's
 * binding leaves it), not every core the machine has. */
#pragma once

namespace dbosim {

/** @brief The CPUs in this process's affinity mask (at least 1); the machine's online cores where the mask cannot be
 *  read. */
int usable_cores();

/** @brief True when this process's affinity mask holds fewer CPUs than the machine has online: a launcher bound it. */
bool bound_to_fewer_cores();

} // namespace dbosim

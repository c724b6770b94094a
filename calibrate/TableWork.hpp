/* dbosim — the work (FLOPs, HBM bytes) of one point of a measured profile table: the kernel the calibration timed,
 * built with the engine's own work builders (models/KernelCost), so a table point can be placed against a GPU's
 * roofline. Used by `dbosim-calibrate derive` (calibrate/ProfileDerive) to split a measured time into the part the
 * roofline explains and the part it does not. */
#pragma once
#include "models/KernelCost.hpp"

#include <map>
#include <optional>
#include <string>

namespace dbosim::calib {

/** @brief The kernel timed at `tokens` by a table of `family` and `dims` (hwprofiles/README.md: families and the
 *  meaning of their dims and tokens), or nullopt when the family is not one of table_work_families() or a dim it
 *  needs is missing (`*missing` then names what is wrong). */
std::optional<models::KernelWork> table_kernel_work(const std::string& family, const std::map<std::string, int>& dims,
                                                    double tokens, std::string* missing = nullptr);

/** @brief The families table_kernel_work() knows, for error messages. */
std::string table_work_families();

} // namespace dbosim::calib

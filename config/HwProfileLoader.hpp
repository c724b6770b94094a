/* dbosim — reads hwprofiles/<name>.yaml (schema: hwprofiles/README.md) into a validated models::HwProfile. */
#pragma once
#include "hw/HwProfile.hpp"

#include <string>
#include <vector>

namespace dbosim {

/** @brief Loads a profile by name ("h200", looked up in hwprofiles/) or by path. */
models::HwProfile load_hw_profile(const std::string& name_or_path);

/** @brief Names of the shipped profiles. */
std::vector<std::string> list_hw_profiles();

} // namespace dbosim

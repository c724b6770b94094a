/* dbosim — reads hwprofiles/network/<name>.yaml (the cluster models' link facts; every value {value, source}) into
 * models::NetworkFacts. Kept beside, not inside, the GPU profile so the profile schema stays the lead's. */
#pragma once
#include "hw/NetworkFacts.hpp"

#include <string>

namespace dbosim {

/** @brief Loads network facts by name ("h800" -> hwprofiles/network/h800.yaml) or by path. */
models::NetworkFacts load_network_facts(const std::string& name_or_path);

} // namespace dbosim

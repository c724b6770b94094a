/* dbosim — JSON text parsed strictly: a key given twice in one object is refused (nlohmann keeps the last silently). */
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace dbosim {

/** @brief Parses `text`; sets `duplicate` to the first key found twice in one object (empty when none).
 *  @throws nlohmann::json::exception on text that is not JSON. */
nlohmann::json parse_json_unique_keys(const std::string& text, std::string& duplicate);

} // namespace dbosim

#include "base/StrictJson.hpp"

#include <set>
#include <vector>

namespace dbosim {

nlohmann::json parse_json_unique_keys(const std::string& text, std::string& duplicate)
{
  using json = nlohmann::json;
  duplicate.clear();
  std::vector<std::set<std::string>> open; // the keys seen, one set per open object or array
  auto check = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start:
      open.emplace_back();
      break;
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      if (!open.empty())
        open.pop_back();
      break;
    case json::parse_event_t::key:
      if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
      break;
    case json::parse_event_t::value:
      break;
    }
    return true;
  };
  return json::parse(text, check);
}

} // namespace dbosim

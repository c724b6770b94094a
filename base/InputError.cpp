#include "base/InputError.hpp"

#include <cstdio>
#include <string>

namespace dbosim {
namespace {
std::string format_error(const std::string& file, int line, int col, const std::string& key, const std::string& message,
                         const std::string& valid)
{
  std::string out = file;
  if (line > 0) { // appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "..." + std::to_string(...)
    out += ':';
    out += std::to_string(line);
    out += ':';
    out += std::to_string(col);
  }
  out += ": ";
  if (!key.empty())
    out += key + ": ";
  out += message;
  if (!valid.empty()) {
    out += " (valid: ";
    out += valid;
    out += ')';
  }
  return out;
}
} // namespace

InputError::InputError(std::string file, int line, int col, std::string key, std::string message, std::string valid)
    : std::runtime_error(format_error(file, line, col, key, message, valid)), file_(std::move(file)), line_(line),
      key_(std::move(key))
{
}

InputError::InputError(std::string file, std::string message)
    : std::runtime_error(format_error(file, 0, 0, "", message, "")), file_(std::move(file))
{
}

std::string message_without_location(std::string what, const std::string& file)
{
  if (what.rfind(file, 0) == 0)
    what = what.substr(file.size());
  int line = 0, col = 0, used = 0;
  if (std::sscanf(what.c_str(), ":%d:%d: %n", &line, &col, &used) == 2 && used > 0)
    return what.substr(static_cast<std::size_t>(used));
  if (what.rfind(": ", 0) == 0)
    return what.substr(2);
  return what;
}

} // namespace dbosim

#include "config/DataDir.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace dbosim {

std::string data_dir()
{
  const char* home = std::getenv("DBOSIM_HOME");
  if (home && *home)
    return home;
  return DBOSIM_SOURCE_DIR;
}

namespace {
bool ends_with(const std::string& s, const std::string& suffix)
{
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
} // namespace

std::string resolve_data_file(const std::string& subdir, const std::string& name_or_path)
{
  if (name_or_path.find('/') != std::string::npos || ends_with(name_or_path, ".yaml") ||
      ends_with(name_or_path, ".json"))
    return name_or_path;
  return data_dir() + "/" + subdir + "/" + name_or_path + ".yaml";
}

std::vector<std::string> list_data_files(const std::string& subdir)
{
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() + "/" + subdir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml")
      out.push_back(entry.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace dbosim

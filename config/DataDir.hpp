/* dbosim — where the shipped data lives (models/zoo, hwprofiles, scenarios). */
#pragma once
#include <string>
#include <vector>

namespace dbosim {

/** @brief $DBOSIM_HOME if set, else the source tree dbosim was built from. */
std::string data_dir();

/** @brief Resolves `name_or_path` inside data_dir()/`subdir` as `<name>.yaml`, unless it already is a path
 *  (contains '/' or ends in ".yaml"/".json"), which is returned as is. */
std::string resolve_data_file(const std::string& subdir, const std::string& name_or_path);

/** @brief Stems of the *.yaml files in data_dir()/`subdir`, sorted. */
std::vector<std::string> list_data_files(const std::string& subdir);

} // namespace dbosim

/* dbosim — a strict reader of one YAML mapping: typed getters with ranges, unknown and duplicate keys rejected,
 * every error located as file:line:col. All input files (scenario, model, profile, plan) are read through it. */
#pragma once
#include "config/Units.hpp"

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace dbosim {

/** @brief Loads a YAML file; missing file or a syntax error becomes an InputError naming the file and line. */
YAML::Node load_yaml_file(const std::string& path);

class YamlMap {
public:
  /** @brief Wraps `node` (which must be a mapping) of `file`; `prefix` is the dotted path of the node ("overlap"). */
  YamlMap(const YAML::Node& node, std::string file, std::string prefix);

  bool has(const std::string& key) const;
  /** @brief The raw value of `key` (must be present). Marks the key as known. */
  YAML::Node raw(const std::string& key);

  int get_int(const std::string& key, long lo, long hi);
  int get_int(const std::string& key, long lo, long hi, int fallback);
  double get_double(const std::string& key, double lo, double hi);
  double get_double(const std::string& key, double lo, double hi, double fallback);
  /** @brief A quantity: a plain number (taken in `plain_scale` × SI base) or a unit string ("450GBps"). */
  double get_quantity(const std::string& key, UnitKind kind, double plain_scale, double lo, double hi);
  bool get_bool(const std::string& key);
  bool get_bool(const std::string& key, bool fallback);
  std::string get_string(const std::string& key);
  std::string get_string(const std::string& key, const std::string& fallback);
  /** @brief A string that must be one of `valid`. */
  std::string get_enum(const std::string& key, const std::vector<std::string>& valid);
  std::string get_enum(const std::string& key, const std::vector<std::string>& valid, const std::string& fallback);
  std::vector<double> get_double_list(const std::string& key, double lo, double hi);
  YamlMap get_map(const std::string& key);
  /** @brief Declares keys as valid without reading them (read elsewhere). */
  void allow(const std::vector<std::string>& keys);
  /** @brief Throws on the first key that no getter asked about, listing the valid keys. */
  void finish() const;

  /** @brief An InputError located at `key` (its value if present, else the mapping). */
  [[noreturn]] void fail(const std::string& key, const std::string& message, const std::string& valid = "") const;
  /** @brief An InputError located at `node`. */
  [[noreturn]] void fail_at(const YAML::Node& node, const std::string& key, const std::string& message,
                            const std::string& valid = "") const;

  const std::string& file() const { return file_; }
  std::string path(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  const YAML::Node& node() const { return node_; }
  const std::string& prefix() const { return prefix_; }
  std::vector<std::string> keys() const;

private:
  YAML::Node value(const std::string& key);
  YAML::Node node_;
  std::string file_;
  std::string prefix_;
  std::map<std::string, YAML::Mark> key_marks_;
  std::vector<std::string> key_order_;
  mutable std::set<std::string> known_;
};

} // namespace dbosim

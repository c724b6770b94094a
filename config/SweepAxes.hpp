/* dbosim — the `sweep:` section, shared by `dbosim sweep` and `dbosim plan`: axes (one dotted key, or comma-joined
 * keys whose values are zipped), their cartesian product (first axis slowest) and the point files they make. */
#pragma once
#include "config/YamlMap.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace dbosim {

/** @brief Where a dotted key is written, for the errors below: its file, 1-based line and column, and the dotted path
 *  of the mapping that holds it ("sweep", "set"; the error names `prefix.key`). */
struct KeyOrigin {
  std::string file;
  int line = 0, col = 0;
  std::string prefix;
};

/** @brief One axis of a sweep. */
struct SweepAxis {
  std::vector<std::string> keys;               ///< "parallel.ep", or zipped keys {"parallel.ep", "parallel.dp"}
  std::vector<std::vector<YAML::Node>> values; ///< per value: one node per key
  KeyOrigin origin;                            ///< where the axis is in the file: its key (1-based), under "sweep"
};

/** @brief The most points a sweep may have: each point is a whole simulation (a serving one in a plan) and a folder of
 *  its own; 10,000 one-rank step points take ~20 s on 2 cores (bench/search), a 1,000-point serving plan minutes. */
constexpr std::size_t max_sweep_points = 100000;

/** @brief Reads and checks `root`'s `leaf` (normally "sweep"): a non-empty mapping of keys to non-empty lists of
 *  values; no empty key in a comma list; a dotted key's section not a plain value; a single-key axis's values
 *  scalars, a k-key axis's values lists of k; at most max_sweep_points points. @throws InputError located at the
 *  offending key or value. */
std::vector<SweepAxis> parse_sweep_axes(YamlMap& root, const std::string& leaf);

/** @brief The value index on each axis of every point, first axis slowest. */
std::vector<std::vector<std::size_t>> sweep_point_indices(const std::vector<SweepAxis>& axes);

/** @brief Checks that the dotted `key` ("section.leaf", "a.b.c" or "leaf") can be set in `node`: every part is
 *  non-empty and every node on its path that exists is a mapping (or empty). @throws InputError at `at` naming the key
 *  and what was found, never a yaml-cpp exception. */
void check_dotted_key(const YAML::Node& node, const std::string& key, const KeyOrigin& at);

/** @brief Sets the dotted `key` of `node` to a copy of `value`, descending only into mappings (missing or empty
 *  sections are created); a null `value` (`~`) leaves the key out instead (a joint axis whose other key makes this one
 *  meaningless: `[[none, ~], [deepseek_mtp, 0.8]]` for a method and its acceptance rate). @throws InputError as
 *  check_dotted_key. */
void set_sweep_key(YAML::Node& node, const std::string& key, const YAML::Node& value, const KeyOrigin& at);

/** @brief Makes model:, hardware:, workload.trace, cluster.network and cluster.routing_histogram paths of `node`
 * absolute, relative to `dir` (a point file lives elsewhere than the file it came from). */
void absolutize_paths(YAML::Node node, const std::string& dir);

/** @brief The index of the axis that sweeps `key` (a dotted key, or the leaf an error names), the last that does; 0
 *  (the first axis) when none does: the sweep line a point's error is reported at. */
std::size_t axis_of_key(const std::vector<SweepAxis>& axes, const std::string& key);

/** @brief `value` of `key` (a path key of absolutize_paths, else unchanged) made absolute relative to `dir`. */
YAML::Node absolutized(const std::string& key, const YAML::Node& value, const std::string& dir);

} // namespace dbosim

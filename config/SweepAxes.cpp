#include "config/SweepAxes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace dbosim {
namespace {

void absolutize(YAML::Node parent, const std::string& key, const std::string& dir)
{
  if (!parent.IsMap() || !parent[key] || !parent[key].IsScalar())
    return;
  const std::string v = parent[key].as<std::string>();
  const bool is_path =
      v.find('/') != std::string::npos || v.ends_with(".yaml") || v.ends_with(".json") || v.ends_with(".csv");
  if (is_path && !std::filesystem::path(v).is_absolute())
    parent[key] = (std::filesystem::absolute(dir) / v).lexically_normal().string();
}

/** The keys of one axis ("a.b, c.d" -> {"a.b", "c.d"}: leading blanks dropped); an empty one is an error. */
std::vector<std::string> split_keys(const YamlMap& axes, const std::string& joined)
{
  std::vector<std::string> keys;
  std::stringstream ss(joined);
  for (std::string k; std::getline(ss, k, ',');) {
    const auto first = k.find_first_not_of(' ');
    if (first == std::string::npos)
      axes.fail(joined, "an empty key in a sweep axis", "a key or comma-joined keys: parallel.ep,parallel.dp");
    keys.push_back(k.substr(first));
  }
  if (keys.empty() || joined.back() == ',')
    axes.fail(joined, "an empty key in a sweep axis", "a key or comma-joined keys: parallel.ep,parallel.dp");
  return keys;
}

} // namespace

std::vector<SweepAxis> parse_sweep_axes(YamlMap& root, const std::string& leaf)
{
  const YAML::Node node = root.raw(leaf);
  if (!node.IsMap() || node.size() == 0)
    root.fail(leaf, "must be a mapping of parameter keys to lists of values",
              "{parallel.ep: [8, 16], workload.max_concurrency: [1, 64]}");
  YamlMap axes = root.get_map(leaf);
  std::vector<SweepAxis> out;
  std::size_t points = 1;
  for (const auto& kv : node) {
    const std::string joined = kv.first.as<std::string>(); // a scalar: YamlMap checked
    SweepAxis a;
    a.line = kv.first.Mark().line + 1;
    a.col  = kv.first.Mark().column + 1;
    a.keys = split_keys(axes, joined);
    for (const std::string& key : a.keys) {
      const auto dot = key.find('.');
      if (dot == std::string::npos)
        continue;
      const YAML::Node section = root.node()[key.substr(0, dot)];
      if (section && !section.IsMap() && !section.IsNull())
        axes.fail(joined, fmt::format("'{}' is not a section of the file", key.substr(0, dot)),
                  "a dotted key into a mapping: parallel.ep");
    }
    const YAML::Node values = axes.raw(joined);
    if (!values.IsSequence() || values.size() == 0)
      axes.fail(joined, "a sweep axis needs a non-empty list of values", "[v1, v2, ...]");
    const std::size_t width = a.keys.size();
    for (const YAML::Node& v : values) {
      if (width == 1 && !v.IsScalar())
        axes.fail_at(v, joined, "each value of a single-key axis must be a scalar");
      if (width > 1 && (!v.IsSequence() || v.size() != width))
        axes.fail_at(v, joined, fmt::format("each value of a {}-key axis must be a list of {} scalars", width, width));
      std::vector<YAML::Node> tuple;
      if (width == 1)
        tuple.push_back(v);
      else
        for (const YAML::Node& e : v)
          tuple.push_back(e);
      a.values.push_back(tuple);
    }
    if (a.values.size() > max_sweep_points / points)
      axes.fail(joined, fmt::format("the sweep has more than {} points", max_sweep_points),
                fmt::format("at most {} points (the product of the axes' lengths)", max_sweep_points));
    points *= a.values.size();
    out.push_back(std::move(a));
  }
  // A key swept both as a whole ("model") and as a section ("model.x") has no single meaning.
  for (const SweepAxis& a : out)
    for (const std::string& whole : a.keys)
      for (const SweepAxis& b : out)
        for (const std::string& key : b.keys)
          if (key.rfind(whole + ".", 0) == 0)
            axes.fail_at(node, key, fmt::format("'{}' is swept both as a value and as a section", whole),
                         "either the whole key or keys inside it");
  return out;
}

std::vector<std::vector<std::size_t>> sweep_point_indices(const std::vector<SweepAxis>& axes)
{
  std::vector<std::vector<std::size_t>> idx{{}};
  for (const SweepAxis& a : axes) { // first axis slowest
    std::vector<std::vector<std::size_t>> next;
    for (const auto& p : idx)
      for (std::size_t v = 0; v < a.values.size(); ++v) {
        next.push_back(p);
        next.back().push_back(v);
      }
    idx = std::move(next);
  }
  return idx;
}

void set_sweep_key(YAML::Node& node, const std::string& key, const YAML::Node& value)
{
  const auto dot = key.find('.');
  if (dot == std::string::npos)
    node[key] = YAML::Clone(value);
  else
    node[key.substr(0, dot)][key.substr(dot + 1)] = YAML::Clone(value);
}

void absolutize_paths(YAML::Node node, const std::string& dir)
{
  absolutize(node, "model", dir);
  absolutize(node, "hardware", dir);
  if (node["workload"])
    absolutize(node["workload"], "trace", dir);
  if (node["cluster"]) {
    absolutize(node["cluster"], "network", dir);
    absolutize(node["cluster"], "routing_histogram", dir);
  }
}

YAML::Node absolutized(const std::string& key, const YAML::Node& value, const std::string& dir)
{
  if (!value.IsScalar())
    return value;
  // The one table of path keys is absolutize_paths: apply it to a scenario holding just this key.
  YAML::Node holder;
  set_sweep_key(holder, key, value);
  absolutize_paths(holder, dir);
  const auto dot = key.find('.');
  return dot == std::string::npos ? holder[key] : holder[key.substr(0, dot)][key.substr(dot + 1)];
}

} // namespace dbosim

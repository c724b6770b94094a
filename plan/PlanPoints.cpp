#include "plan/PlanPoints.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace dbosim::plan {
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

void set_key(YAML::Node& node, const std::string& key, const YAML::Node& value)
{
  const auto dot = key.find('.');
  if (dot == std::string::npos)
    node[key] = YAML::Clone(value);
  else
    node[key.substr(0, dot)][key.substr(dot + 1)] = YAML::Clone(value);
}

std::string emit(const YAML::Node& node)
{
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

} // namespace

std::string PlanPoint::value(const std::string& key) const
{
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (keys[k] == key)
      return values[k];
  return "";
}

std::string PlanPoint::label() const
{
  std::string s;
  for (std::size_t k = 0; k < keys.size(); ++k)
    s += fmt::format("{}{}={}", k ? ", " : "", keys[k], values[k]);
  return s;
}

void absolutize_paths(YAML::Node node, const std::string& dir)
{
  absolutize(node, "model", dir);
  absolutize(node, "hardware", dir);
  if (node["workload"])
    absolutize(node["workload"], "trace", dir);
}

std::vector<PlanPoint> enumerate_points(const PlanSpec& spec)
{
  std::vector<std::vector<std::size_t>> idx{{}};
  for (const PlanAxis& a : spec.axes) { // first axis slowest
    std::vector<std::vector<std::size_t>> next;
    for (const auto& p : idx)
      for (std::size_t v = 0; v < a.values.size(); ++v) {
        next.push_back(p);
        next.back().push_back(v);
      }
    idx = std::move(next);
  }
  const std::string dir = std::filesystem::path(spec.file).parent_path().string();
  std::vector<PlanPoint> points;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    PlanPoint p;
    p.index = i;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      for (std::size_t k = 0; k < spec.axes[a].keys.size(); ++k) {
        const std::string& key = spec.axes[a].keys[k];
        YAML::Node v           = YAML::Clone(spec.axes[a].values[idx[i][a]][k]);
        if ((key == "model" || key == "hardware") && v.IsScalar()) {
          YAML::Node holder;
          holder[key] = v;
          absolutize(holder, key, dir);
          v = holder[key];
        }
        p.keys.push_back(key);
        p.nodes.push_back(v);
        p.values.push_back(v.IsScalar() ? v.as<std::string>() : emit(v));
      }
    points.push_back(std::move(p));
  }
  return points;
}

std::string point_yaml(const PlanSpec& spec, const PlanPoint& point)
{
  YAML::Node node = YAML::Clone(spec.base);
  for (std::size_t k = 0; k < point.keys.size(); ++k)
    set_key(node, point.keys[k], point.nodes[k]);
  return emit(node);
}

std::string shard_sweep_yaml(const PlanSpec& spec, const std::vector<PlanPoint>& points)
{
  YAML::Node node = YAML::Clone(spec.base);
  if (points.empty())
    return emit(node);
  std::string joined;
  for (std::size_t k = 0; k < points.front().keys.size(); ++k)
    joined += (k ? "," : "") + points.front().keys[k];
  YAML::Node axis(YAML::NodeType::Sequence);
  for (const PlanPoint& p : points) {
    if (p.keys.size() == 1) {
      axis.push_back(YAML::Clone(p.nodes.front()));
      continue;
    }
    YAML::Node tuple(YAML::NodeType::Sequence);
    for (const YAML::Node& v : p.nodes)
      tuple.push_back(YAML::Clone(v));
    axis.push_back(tuple);
  }
  node["sweep"][joined] = axis;
  return emit(node);
}

} // namespace dbosim::plan

#include "plan/PlanPoints.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace dbosim::plan {
namespace {

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

std::vector<PlanPoint> enumerate_points(const PlanSpec& spec)
{
  const std::vector<std::vector<std::size_t>> idx = sweep_point_indices(spec.axes);
  const std::string dir                           = std::filesystem::path(spec.file).parent_path().string();
  // Each axis value's node and text, made once and shared by the points that take it (a YAML tree per point and key
  // is tens of kilobytes a point: 0.8 GB for 10^4 points); a point's scenario clones what it sets.
  std::vector<std::vector<std::vector<std::pair<YAML::Node, std::string>>>> value_of(spec.axes.size());
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    for (const std::vector<YAML::Node>& tuple : spec.axes[a].values) {
      auto& at = value_of[a].emplace_back();
      for (std::size_t k = 0; k < spec.axes[a].keys.size(); ++k) {
        const YAML::Node v = absolutized(spec.axes[a].keys[k], YAML::Clone(tuple[k]), dir);
        at.emplace_back(v, v.IsScalar() ? v.as<std::string>() : emit(v));
      }
    }
  std::vector<PlanPoint> points;
  std::size_t next_dropped = 0; // spec.dropped is in product order
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (next_dropped < spec.dropped.size() && spec.dropped[next_dropped].index == i) {
      ++next_dropped;
      continue;
    }
    PlanPoint p;
    p.index = points.size();
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      for (std::size_t k = 0; k < spec.axes[a].keys.size(); ++k) {
        const auto& [node, text] = value_of[a][idx[i][a]][k];
        p.keys.push_back(spec.axes[a].keys[k]);
        p.nodes.push_back(node);
        p.values.push_back(text);
      }
    points.push_back(std::move(p));
  }
  return points;
}

std::string point_yaml(const PlanSpec& spec, const PlanPoint& point)
{
  YAML::Node node = YAML::Clone(spec.base);
  for (std::size_t k = 0; k < point.keys.size(); ++k)
    set_sweep_key(node, point.keys[k], point.nodes[k], KeyOrigin{spec.file, 0, 0, "sweep"}); // checked by load_plan
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

#include "config/SweepAxes.hpp"

#include "base/InputError.hpp"

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
    parent[key] = (std::filesystem::absolute(dir.empty() ? "." : dir) / v).lexically_normal().string(); // "": cwd
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
    a.origin = KeyOrigin{root.file(), kv.first.Mark().line + 1, kv.first.Mark().column + 1, axes.prefix()};
    a.keys   = split_keys(axes, joined);
    const YAML::Node values = axes.raw(joined);
    for (const std::string& key : a.keys) // located at the values, as the other checks of an axis
      check_dotted_key(root.node(), key,
                       KeyOrigin{root.file(), values.Mark().line + 1, values.Mark().column + 1, axes.prefix()});
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

namespace {

/** "a.b.c" -> {"a", "b", "c"}; an empty part is an error at `at`. */
std::string shown(const std::string& key, const KeyOrigin& at)
{
  return at.prefix.empty() ? key : at.prefix + "." + key;
}

std::vector<std::string> dotted_parts(const std::string& key, const KeyOrigin& at)
{
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty())
      throw InputError(at.file, at.line, at.col, shown(key, at), "an empty part in a dotted key",
                       "section.key, e.g. workload.tokens_per_rank");
    if (dot == std::string::npos)
      return parts;
    start = dot + 1;
  }
}

std::string node_kind(const YAML::Node& n)
{
  if (n.IsScalar())
    return fmt::format("the value '{}'", n.Scalar());
  return n.IsSequence() ? "a list" : "not a mapping";
}

/** The error for a path node that is not a mapping: `where` ("workload") holds a plain value or a list. */
[[noreturn]] void not_a_section(const std::string& key, const std::string& where, const YAML::Node& found,
                                const KeyOrigin& at)
{
  std::string message = fmt::format("'{}' holds {}", where, node_kind(found));
  if (found.Mark().line >= 0)
    message += fmt::format(" (line {})", found.Mark().line + 1);
  throw InputError(at.file, at.line, at.col, shown(key, at), message + ", so a dotted key cannot descend into it",
                   "a dotted key into mappings only: " + where + " must be a mapping of keys to values");
}

/** True where a dotted key may descend into `n`: absent, empty (`section:` with no value) or a mapping. */
bool is_section(const YAML::Node& n) { return !n.IsDefined() || n.IsNull() || n.IsMap(); }

} // namespace

namespace {

/** The parts of `key`, checked as check_dotted_key says. */
std::vector<std::string> checked_parts(const YAML::Node& node, const std::string& key, const KeyOrigin& at)
{
  const std::vector<std::string> parts = dotted_parts(key, at);
  if (!is_section(node))
    not_a_section(key, "the file's top level", node, at);
  YAML::Node cur = node; // a const walk: operator[] on a const node adds nothing
  std::string where;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    where += (i ? "." : "") + parts[i];
    const YAML::Node next = static_cast<const YAML::Node&>(cur)[parts[i]];
    if (!next.IsDefined())
      return parts; // the rest of the path is created
    if (!is_section(next))
      not_a_section(key, where, next, at);
    cur.reset(next);
  }
  return parts;
}

} // namespace

void check_dotted_key(const YAML::Node& node, const std::string& key, const KeyOrigin& at)
{
  checked_parts(node, key, at);
}

void set_sweep_key(YAML::Node& node, const std::string& key, const YAML::Node& value, const KeyOrigin& at)
{
  const std::vector<std::string> parts = checked_parts(node, key, at);
  if (value.IsNull()) { // `~`: the key left out (a section's option that has no meaning at the point's other values)
    YAML::Node cur = node;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      const YAML::Node next = static_cast<const YAML::Node&>(cur)[parts[i]];
      if (!next.IsDefined() || !next.IsMap())
        return; // nothing there to leave out
      cur.reset(next);
    }
    if (cur.IsMap())
      cur.remove(parts.back());
    return;
  }
  if (parts.size() == 1) {
    node[key] = YAML::Clone(value);
    return;
  }
  // Indexed on `node` itself first: a copy of a default-constructed node would not share its (not yet made) tree.
  YAML::Node cur = node[parts.front()];
  for (std::size_t i = 1; i + 1 < parts.size(); ++i)
    cur.reset(cur[parts[i]]);
  cur[parts.back()] = YAML::Clone(value);
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
  set_sweep_key(holder, key, value, KeyOrigin{});
  absolutize_paths(holder, dir);
  const std::vector<std::string> parts = dotted_parts(key, KeyOrigin{});
  YAML::Node cur                       = holder[parts.front()];
  for (std::size_t i = 1; i < parts.size(); ++i)
    cur.reset(cur[parts[i]]);
  return cur;
}

std::size_t axis_of_key(const std::vector<SweepAxis>& axes, const std::string& key)
{
  std::size_t axis = 0;
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (const std::string& k : axes[a].keys)
      if (k == key || k.substr(k.find('.') + 1) == key)
        axis = a;
  return axis;
}

} // namespace dbosim

#include "config/YamlMap.hpp"

#include "base/InputError.hpp"
#include "config/InputFile.hpp"

#include <fmt/format.h>

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

namespace dbosim {

namespace {
// 1-based line and column of a byte offset in a text.
std::pair<int, int> line_col(const std::string& text, std::size_t offset)
{
  const auto line              = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n') + 1;
  const std::size_t nl         = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  const std::size_t line_start = nl == std::string::npos ? 0 : nl + 1;
  return {static_cast<int>(line), static_cast<int>(offset - line_start + 1)};
}
} // namespace

YAML::Node load_yaml_file(const std::string& path)
{
  const std::string text = read_input_file(path);
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string::npos) {
    const auto [line, col] = line_col(text, bad);
    throw InputError(
        path, line, col, "",
        fmt::format("byte 0x{:02X} is not valid UTF-8 (YAML files are UTF-8)", static_cast<unsigned char>(text[bad])));
  }
  // A second document is found in the text (yaml-cpp's LoadAll can loop forever on some malformed inputs): a `---`
  // line after content, followed by more content.
  {
    bool content        = false;
    std::size_t line_no = 0, pos = 0;
    bool second = false;
    while (pos <= text.size()) {
      const std::size_t end  = std::min(text.find('\n', pos), text.size());
      const std::string line = text.substr(pos, end - pos);
      ++line_no;
      const std::size_t first = line.find_first_not_of(" \t\r");
      const bool blank        = first == std::string::npos || line[first] == '#';
      const auto marker       = [&line](const char* m) {
        return line.rfind(m, 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
      };
      if (marker("---")) {
        const std::size_t after = line.find_first_not_of(" \t\r", 3); // `--- value` opens a document with content
        if (content)
          second = true;
        else if (after != std::string::npos && line[after] != '#')
          content = true;
      } else if (!blank && !marker("...")) {
        if (second)
          throw InputError(path, static_cast<int>(line_no), static_cast<int>(first + 1), "(document 2)",
                           "a second YAML document: a dbosim file holds one", "one document per file");
        content = true;
      }
      pos = end + 1;
    }
  }
  try {
    YAML::Node doc = YAML::Load(text);
    if (!doc.IsDefined() || doc.IsNull())
      throw InputError(path, "file is empty");
    return doc;
  } catch (const YAML::DeepRecursion& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, "",
                     "YAML nested too deeply (lists or mappings inside each other hundreds of levels down)");
  } catch (const YAML::Exception& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + e.msg);
  }
}

YamlMap::YamlMap(const YAML::Node& node, std::string file, std::string prefix)
    : node_(node), file_(std::move(file)), prefix_(std::move(prefix))
{
  if (!node_.IsMap()) {
    YAML::Mark m = node_.Mark();
    throw InputError(file_, m.line + 1, m.column + 1, prefix_.empty() ? "(top level)" : prefix_,
                     "expected a mapping of keys to values");
  }
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) {
      YAML::Mark m = it->first.Mark();
      throw InputError(file_, m.line + 1, m.column + 1, prefix_, "keys must be plain names");
    }
    const std::string key = it->first.Scalar();
    if (key_marks_.count(key)) {
      YAML::Mark m = it->first.Mark();
      throw InputError(file_, m.line + 1, m.column + 1, path(key), "duplicate key");
    }
    key_marks_[key] = it->first.Mark();
    key_order_.push_back(key);
  }
}

bool YamlMap::has(const std::string& key) const
{
  known_.insert(key);
  return key_marks_.count(key) > 0;
}

std::vector<std::string> YamlMap::keys() const { return key_order_; }

void YamlMap::allow(const std::vector<std::string>& keys) { known_.insert(keys.begin(), keys.end()); }

YAML::Node YamlMap::value(const std::string& key)
{
  known_.insert(key);
  if (!key_marks_.count(key))
    fail(key, "required key is missing");
  YAML::Node v = node_[key];
  if (v.IsNull())
    fail(key, "has no value");
  return v;
}

YAML::Node YamlMap::raw(const std::string& key) { return value(key); }

void YamlMap::fail(const std::string& key, const std::string& message, const std::string& valid) const
{
  YAML::Mark m;
  auto it = key_marks_.find(key);
  if (it != key_marks_.end()) {
    YAML::Node v = node_[key];
    m            = v.IsDefined() && !v.IsNull() ? v.Mark() : it->second;
  } else {
    m = node_.Mark();
  }
  throw InputError(file_, m.line + 1, m.column + 1, path(key), message, valid);
}

void YamlMap::fail_at(const YAML::Node& node, const std::string& key, const std::string& message,
                      const std::string& valid) const
{
  YAML::Mark m = node.Mark();
  throw InputError(file_, m.line + 1, m.column + 1, path(key), message, valid);
}

namespace {
std::string range_text(double lo, double hi) { return fmt::format("{:g}..{:g}", lo, hi); }
} // namespace

int YamlMap::get_int(const std::string& key, long lo, long hi)
{
  YAML::Node v     = value(key);
  long out         = 0;
  double as_double = 0;
  if (!v.IsScalar() || !YAML::convert<long>::decode(v, out)) {
    if (v.IsScalar() && YAML::convert<double>::decode(v, as_double))
      fail(key, fmt::format("expected an integer, got '{}'", v.Scalar()), fmt::format("{}..{}", lo, hi));
    fail(key, "expected an integer", fmt::format("{}..{}", lo, hi));
  }
  if (out < lo || out > hi)
    fail(key, fmt::format("{} is out of range", out), fmt::format("{}..{}", lo, hi));
  return static_cast<int>(out);
}

int YamlMap::get_int(const std::string& key, long lo, long hi, int fallback)
{
  return has(key) ? get_int(key, lo, hi) : fallback;
}

double YamlMap::get_double(const std::string& key, double lo, double hi)
{
  YAML::Node v = value(key);
  double out   = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, out))
    fail(key, "expected a number", range_text(lo, hi));
  if (!std::isfinite(out))
    fail(key, fmt::format("'{}' is not a finite number", v.Scalar()), range_text(lo, hi));
  if (out < lo || out > hi)
    fail(key, fmt::format("{:g} is out of range", out), range_text(lo, hi));
  return out;
}

double YamlMap::get_double(const std::string& key, double lo, double hi, double fallback)
{
  return has(key) ? get_double(key, lo, hi) : fallback;
}

double YamlMap::get_quantity(const std::string& key, UnitKind kind, double plain_scale, double lo, double hi)
{
  YAML::Node v = value(key);
  if (!v.IsScalar())
    fail(key, "expected a number or a quantity with a unit", unit_names(kind));
  double out = 0;
  if (YAML::convert<double>::decode(v, out)) {
    // A plain bandwidth is refused: profiles give GB/s, TB/s and Gbit/s side by side, and a bare 3.35 read in the
    // wrong one is off by 1000x or 8x with no error.
    if (kind == UnitKind::bandwidth && std::isfinite(out))
      fail(key,
           fmt::format("'{}' has no unit: a bandwidth needs one, e.g. '{}TBps' or '{}GBps'", v.Scalar(), v.Scalar(),
                       v.Scalar()),
           unit_names(kind));
    out *= plain_scale;
  } else {
    try {
      out = parse_quantity(v.Scalar(), kind);
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
  }
  if (!std::isfinite(out))
    fail(key, fmt::format("'{}' is not a finite number", v.Scalar()));
  if (out < lo || out > hi)
    fail(key, fmt::format("'{}' is out of range", v.Scalar()), fmt::format("{:g}..{:g} in SI base units", lo, hi));
  return out;
}

bool YamlMap::get_bool(const std::string& key)
{
  YAML::Node v = value(key);
  bool out     = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out))
    fail(key, "expected true or false", "true, false");
  return out;
}

bool YamlMap::get_bool(const std::string& key, bool fallback) { return has(key) ? get_bool(key) : fallback; }

std::string YamlMap::get_string(const std::string& key)
{
  YAML::Node v = value(key);
  if (!v.IsScalar())
    fail(key, "expected a string");
  return v.Scalar();
}

std::string YamlMap::get_string(const std::string& key, const std::string& fallback)
{
  return has(key) ? get_string(key) : fallback;
}

std::string YamlMap::get_enum(const std::string& key, const std::vector<std::string>& valid)
{
  std::string v = get_string(key);
  std::string names;
  for (const auto& name : valid) {
    if (name == v)
      return v;
    names += (names.empty() ? "" : ", ") + name;
  }
  fail(key, fmt::format("unknown value '{}'", v), names);
}

std::string YamlMap::get_enum(const std::string& key, const std::vector<std::string>& valid,
                              const std::string& fallback)
{
  return has(key) ? get_enum(key, valid) : fallback;
}

std::vector<double> YamlMap::get_double_list(const std::string& key, double lo, double hi)
{
  YAML::Node v = value(key);
  if (!v.IsSequence() || v.size() == 0)
    fail(key, "expected a non-empty list of numbers");
  std::vector<double> out;
  for (const auto& item : v) {
    double x = 0;
    if (!item.IsScalar() || !YAML::convert<double>::decode(item, x) || !std::isfinite(x))
      fail_at(item, key, "expected a finite number");
    if (x < lo || x > hi)
      fail_at(item, key, fmt::format("{:g} is out of range", x), range_text(lo, hi));
    out.push_back(x);
  }
  return out;
}

YamlMap YamlMap::get_map(const std::string& key)
{
  YAML::Node v = value(key);
  if (!v.IsMap())
    fail(key, "expected a mapping of keys to values");
  return YamlMap(v, file_, path(key));
}

void YamlMap::finish() const
{
  for (const auto& key : key_order_) {
    if (known_.count(key))
      continue;
    std::string names;
    for (const auto& k : known_)
      names += (names.empty() ? "" : ", ") + k;
    const YAML::Mark& m = key_marks_.at(key);
    throw InputError(file_, m.line + 1, m.column + 1, path(key), "unknown key", names);
  }
}

} // namespace dbosim

#include "JsonSchema.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace dbosim::test {

namespace {

using json = nlohmann::json;

const std::set<std::string>& known_keywords()
{
  static const std::set<std::string> k{"$schema",  "$id",  "$comment",   "title",    "description",          "$defs",
                                       "$ref",     "type", "properties", "required", "additionalProperties", "items",
                                       "minItems", "enum", "minimum",    "maximum"};
  return k;
}

bool has_type(const json& v, const std::string& t)
{
  if (t == "object")
    return v.is_object();
  if (t == "array")
    return v.is_array();
  if (t == "string")
    return v.is_string();
  if (t == "boolean")
    return v.is_boolean();
  if (t == "null")
    return v.is_null();
  if (t == "number")
    return v.is_number();
  if (t == "integer")
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  return false;
}

std::string kind_of(const json& v)
{
  return v.is_number_integer() ? "integer" : v.is_number() ? "number" : v.type_name();
}

class Validator {
public:
  explicit Validator(const json& root) : root_(root) {}

  void check(const json& schema, const json& v, const std::string& path)
  {
    if (schema.is_boolean()) {
      if (!schema.get<bool>())
        out.push_back(fmt::format("{}: not allowed here", path_or_root(path)));
      return;
    }
    if (!schema.is_object()) {
      out.push_back(fmt::format("{}: the schema is neither an object nor a boolean", path_or_root(path)));
      return;
    }
    for (auto it = schema.begin(); it != schema.end(); ++it)
      if (!known_keywords().count(it.key()))
        out.push_back(
            fmt::format("{}: schema keyword '{}' is not supported by this validator", path_or_root(path), it.key()));
    if (schema.contains("$ref")) {
      const std::string ref = schema["$ref"].get<std::string>();
      const std::string pre = "#/$defs/";
      if (ref.rfind(pre, 0) != 0 || !root_.contains("$defs") || !root_["$defs"].contains(ref.substr(pre.size()))) {
        out.push_back(fmt::format("{}: unresolved $ref '{}'", path_or_root(path), ref));
        return;
      }
      check(root_["$defs"][ref.substr(pre.size())], v, path);
    }
    if (schema.contains("type")) {
      const json& t = schema["type"];
      bool ok       = false;
      for (const json& one : t.is_array() ? t : json::array({t}))
        ok = ok || has_type(v, one.get<std::string>());
      if (!ok) {
        out.push_back(fmt::format("{}: {} where {} is expected", path_or_root(path), kind_of(v), t.dump()));
        return;
      }
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const json& e : schema["enum"])
        found = found || e == v;
      if (!found)
        out.push_back(fmt::format("{}: {} is not one of {}", path_or_root(path), v.dump(), schema["enum"].dump()));
    }
    if (v.is_number()) {
      const double x = v.get<double>();
      if (!std::isfinite(x))
        out.push_back(fmt::format("{}: not a finite number", path_or_root(path)));
      if (schema.contains("minimum") && x < schema["minimum"].get<double>())
        out.push_back(fmt::format("{}: {} is below the minimum {}", path_or_root(path), x, schema["minimum"].dump()));
      if (schema.contains("maximum") && x > schema["maximum"].get<double>())
        out.push_back(fmt::format("{}: {} is above the maximum {}", path_or_root(path), x, schema["maximum"].dump()));
    }
    if (v.is_array()) {
      if (schema.contains("minItems") && v.size() < schema["minItems"].get<std::size_t>())
        out.push_back(
            fmt::format("{}: {} item(s), fewer than {}", path_or_root(path), v.size(), schema["minItems"].dump()));
      if (schema.contains("items"))
        for (std::size_t i = 0; i < v.size(); ++i)
          check(schema["items"], v[i], fmt::format("{}/{}", path, i));
    }
    if (v.is_object()) {
      if (schema.contains("required"))
        for (const json& k : schema["required"])
          if (!v.contains(k.get<std::string>()))
            out.push_back(fmt::format("{}: required key '{}' is missing", path_or_root(path), k.get<std::string>()));
      const json props = schema.value("properties", json::object());
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string p = path + "/" + it.key();
        if (props.contains(it.key()))
          check(props[it.key()], it.value(), p);
        else if (schema.contains("additionalProperties"))
          check(schema["additionalProperties"], it.value(), p);
      }
    }
  }

  std::vector<std::string> out;

private:
  const json& root_;
  static std::string path_or_root(const std::string& p) { return p.empty() ? "/" : p; }
};

} // namespace

std::vector<std::string> schema_violations(const nlohmann::json& schema, const nlohmann::json& doc,
                                           const std::string& def)
{
  Validator v(schema);
  v.check(def.empty() ? schema : json{{"$ref", "#/$defs/" + def}}, doc, "");
  return v.out;
}

} // namespace dbosim::test

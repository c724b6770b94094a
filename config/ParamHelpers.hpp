/* dbosim — helpers to declare scenario parameters in one line each (see config/ScenarioParams). A section's
 * parameters can live in their own file: `void add_<section>_params(std::vector<ParamDecl>&)`. */
#pragma once
#include "config/ScenarioParams.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dbosim::params {

template <typename Access>
ParamDecl int_param(std::string key, std::string unit, std::optional<int> def, long lo, long hi, std::string doc,
                    Access access)
{
  ParamDecl d{
      std::move(key), "int",   std::move(unit), def ? std::to_string(*def) : "required", fmt::format("{}..{}", lo, hi),
      std::move(doc), nullptr, nullptr};
  if (def)
    d.set_default = [access, v = *def](Scenario& s) { access(s) = v; };
  d.read = [access, lo, hi](YamlMap& m, const std::string& leaf, Scenario& s) { access(s) = m.get_int(leaf, lo, hi); };
  return d;
}

template <typename Access> ParamDecl bool_param(std::string key, bool def, std::string doc, Access access)
{
  ParamDecl d{std::move(key), "bool", "", def ? "true" : "false", "true, false", std::move(doc), nullptr, nullptr};
  d.set_default = [access, def](Scenario& s) { access(s) = def; };
  d.read        = [access](YamlMap& m, const std::string& leaf, Scenario& s) { access(s) = m.get_bool(leaf); };
  return d;
}

/** @brief A string choice mapped to an enum value. */
template <typename E, typename Access>
ParamDecl enum_param(std::string key, std::vector<std::pair<std::string, E>> choices, std::optional<E> def,
                     std::string doc, Access access)
{
  std::vector<std::string> names;
  std::string def_text = "required";
  for (const auto& [name, value] : choices) {
    names.push_back(name);
    if (def && value == *def)
      def_text = name;
  }
  ParamDecl d{std::move(key), "enum",  "",     def_text, fmt::format("{}", fmt::join(names, ", ")),
              std::move(doc), nullptr, nullptr};
  if (def)
    d.set_default = [access, v = *def](Scenario& s) { access(s) = v; };
  d.read = [access, choices, names](YamlMap& m, const std::string& leaf, Scenario& s) {
    const std::string name = m.get_enum(leaf, names);
    for (const auto& [n, value] : choices)
      if (n == name)
        access(s) = value;
  };
  return d;
}

template <typename Access>
ParamDecl double_param(std::string key, std::string unit, std::optional<double> def, double lo, double hi,
                       std::string doc, Access access)
{
  ParamDecl d{std::move(key),
              "float",
              std::move(unit),
              def ? fmt::format("{:g}", *def) : "required",
              fmt::format("{:g}..{:g}", lo, hi),
              std::move(doc),
              nullptr,
              nullptr};
  if (def)
    d.set_default = [access, v = *def](Scenario& s) { access(s) = v; };
  d.read = [access, lo, hi](YamlMap& m, const std::string& leaf, Scenario& s) {
    access(s) = m.get_double(leaf, lo, hi);
  };
  return d;
}

template <typename Access>
ParamDecl string_param(std::string key, std::string def, std::string valid, std::string doc, Access access)
{
  ParamDecl d{std::move(key),   "string",       "",      def.empty() ? "none" : def,
              std::move(valid), std::move(doc), nullptr, nullptr};
  d.set_default = [access, def](Scenario& s) { access(s) = def; };
  d.read        = [access](YamlMap& m, const std::string& leaf, Scenario& s) { access(s) = m.get_string(leaf); };
  return d;
}

} // namespace dbosim::params

namespace dbosim {
/** @brief A relative path in a scenario is relative to the scenario's folder (a name with a '/' or ending .yaml or
 *  .json); a bare name is returned as is, for a data-dir lookup. config/ScenarioParams.cpp. */
std::string relative_to_file(const YamlMap& m, const std::string& name);
/** @brief The serving keys (workload.num_prompts..., scheduler.*, serving.*, sweep): config/ServingParams.cpp. */
void add_serving_params(std::vector<ParamDecl>& p);
/** @brief The speculative_config.* keys (vLLM --speculative-config): config/SpeculativeParams.cpp. */
void add_speculative_params(std::vector<ParamDecl>& p);
/** @brief The speculative keys' cross-key rules, reported at `section` (the speculative_config mapping, or the
 *  root when the scenario has none); run after every key is read. */
void check_speculative_rules(const YamlMap& section, bool has_section, const Scenario& s);
/** @brief The precision.* keys (docs/dimensions.md): config/PrecisionParams.cpp. */
void add_precision_params(std::vector<ParamDecl>& p);
/** @brief Applies the precision keys to s.model (the model's own formats where unset) and checks that s.hw runs each
 *  format: an error at the key (in `section`) when the scenario set it, else at `model` of `root`. */
void apply_precision(const YamlMap& root, const YamlMap& section, bool has_section, Scenario& s);
} // namespace dbosim

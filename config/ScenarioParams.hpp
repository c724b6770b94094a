/* dbosim — every scenario parameter declared once: key, type, unit, default, valid range, doc, and how it is read.
 * `dbosim run --help-params` prints this table; the loader reads scenarios through it. */
#pragma once
#include "config/Scenario.hpp"
#include "config/YamlMap.hpp"

#include <functional>
#include <string>
#include <vector>

namespace dbosim {

struct ParamDecl {
  std::string key;          ///< dotted path: "overlap.dbo_comm_sms"
  std::string type;         ///< int | bool | enum | string | model | profile
  std::string unit;         ///< "tokens", "SMs", "" ...
  std::string default_text; ///< "20", "required"
  std::string valid;        ///< "0..1024", "decode, prefill"
  std::string doc;
  std::function<void(Scenario&)> set_default; ///< empty for required keys
  std::function<void(YamlMap& section, const std::string& leaf, Scenario&)> read;
  bool required() const { return !set_default; }
  std::string section() const; ///< "overlap" ("" for top level)
  std::string leaf() const;    ///< "dbo_comm_sms"
};

/** @brief The declared scenario parameters, in documentation order. */
const std::vector<ParamDecl>& scenario_params();

/** @brief The parameter table as aligned text (for --help-params). */
std::string format_param_table();

} // namespace dbosim

#include "config/SimEngineNames.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

namespace dbosim::sim {

namespace {
struct EngineRow {
  EngineKind kind;
  const char* name;
};
constexpr EngineRow engine_rows[] = {
    {EngineKind::simgrid, "simgrid"}, {EngineKind::replay, "replay"}, {EngineKind::automatic, "auto"}};
} // namespace

const char* engine_name(EngineKind e)
{
  for (const EngineRow& r : engine_rows)
    if (r.kind == e)
      return r.name;
  return "?";
}

std::optional<EngineKind> parse_engine(const std::string& name)
{
  for (const EngineRow& r : engine_rows)
    if (name == r.name)
      return r.kind;
  return std::nullopt;
}

std::vector<std::string> engine_name_list()
{
  std::vector<std::string> out;
  for (const EngineRow& r : engine_rows)
    out.emplace_back(r.name);
  return out;
}

std::string engine_names()
{
  std::string out;
  for (const std::string& name : engine_name_list()) {
    if (!out.empty())
      out += '|';
    out += name;
  }
  return out;
}

EngineKind engine_from_option(const std::string& value)
{
  if (const std::optional<EngineKind> e = parse_engine(value))
    return *e;
  throw InputError("--engine", 0, 0, "", fmt::format("unknown engine '{}'", value), engine_names());
}

} // namespace dbosim::sim

/* summary_schema_check SCHEMA [--def NAME] FILE... — checks each JSON FILE against SCHEMA, or against its
 * $defs/NAME (tests/JsonSchema: the subset of JSON Schema docs/summary.schema.json uses). Exit 0: every file conforms;
 * 1: a file does not (each violation printed as FILE: /path: what); 2: bad usage, or a file cannot be read or
 * parsed. */
#include "JsonSchema.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

int main(int argc, char** argv)
{
  auto usage = [] {
    fmt::print(stderr, "usage: summary_schema_check SCHEMA [--def NAME] FILE...\n");
    return 2;
  };
  if (argc < 3)
    return usage();
  auto load = [](const char* path, nlohmann::json& out) {
    std::ifstream in(path);
    if (!in) {
      fmt::print(stderr, "{}: cannot be read\n", path);
      return false;
    }
    try {
      out = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      fmt::print(stderr, "{}: not JSON: {}\n", path, e.what());
      return false;
    }
    return true;
  };
  nlohmann::json schema;
  if (!load(argv[1], schema))
    return 2;
  int first = 2;
  std::string def;
  if (std::string(argv[2]) == "--def") {
    if (argc < 5)
      return usage();
    def   = argv[3];
    first = 4;
  }
  int rc = 0;
  for (int i = first; i < argc; ++i) {
    nlohmann::json doc;
    if (!load(argv[i], doc))
      return 2;
    for (const std::string& v : dbosim::test::schema_violations(schema, doc, def)) {
      fmt::print(stderr, "{}: {}\n", argv[i], v);
      rc = 1;
    }
  }
  return rc;
}

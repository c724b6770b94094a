/* dbosim tests — docs/summary.schema.json and its validator (tests/JsonSchema): the validator catches what the schema
 * forbids, and a single-rank and a cluster (drawn routing) summary.json both conform, the cluster one with every key
 * the single-rank one has. tests/cli_matrix.sh checks every shipped scenario's summary.json against the schema. */
#include "JsonSchema.hpp"
#include "RunShell.hpp"
#include "TempDir.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

namespace {

using dbosim::test::run_shell;
using dbosim::test::schema_violations;
using json = nlohmann::json;

json read_json(const std::string& path)
{
  std::ifstream in(path);
  REQUIRE(in);
  return json::parse(in);
}

json summary_schema() { return read_json(std::string(DBOSIM_SOURCE_DIR) + "/docs/summary.schema.json"); }

bool mentions(const std::vector<std::string>& v, const std::string& what)
{
  for (const std::string& s : v)
    if (s.find(what) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("json schema: the validator reports each broken rule of its subset", "[quick]")
{
  const json schema = json::parse(R"({
    "type": "object",
    "properties": {
      "t": {"$ref": "#/$defs/us"},
      "mode": {"enum": ["a", "b"]},
      "n": {"type": "integer", "minimum": 1},
      "xs": {"type": "array", "items": {"$ref": "#/$defs/us"}, "minItems": 2},
      "pct": {"type": "number", "maximum": 100}
    },
    "required": ["t", "n"],
    "additionalProperties": false,
    "$defs": {"us": {"type": "number", "minimum": 0}}
  })");
  CHECK(schema_violations(schema, json::parse(R"({"t": 1.5, "n": 2, "xs": [0, 3], "mode": "a"})")).empty());
  CHECK(schema_violations(schema, json::parse(R"({"t": 1, "n": 2.0})")).empty()); // 2.0 is an integer

  const auto v = schema_violations(
      schema, json::parse(R"({"n": 0.5, "xs": [-1], "mode": "c", "pct": 101, "extra": true, "t": "x"})"));
  CHECK(mentions(v, "/t: string where \"number\" is expected"));
  CHECK(mentions(v, "/n: number where \"integer\" is expected"));
  CHECK(mentions(v, "/xs/0: -1 is below the minimum 0"));
  CHECK(mentions(v, "/xs: 1 item(s), fewer than 2"));
  CHECK(mentions(v, "/mode: \"c\" is not one of"));
  CHECK(mentions(v, "/pct: 101 is above the maximum 100"));
  CHECK(mentions(v, "/extra: not allowed here"));
  CHECK(v.size() == 7);
  CHECK(mentions(schema_violations(schema, json::parse(R"({"t": 1})")), "/: required key 'n' is missing"));

  // A keyword the validator does not implement is reported, not silently passed.
  CHECK(mentions(schema_violations(json::parse(R"({"type": "string", "pattern": "^a"})"), "b"),
                 "schema keyword 'pattern' is not supported"));
  CHECK(mentions(schema_violations(json::parse(R"({"$ref": "#/$defs/none"})"), 1), "unresolved $ref"));
  // A $defs entry on its own.
  CHECK(schema_violations(schema, 3.0, "us").empty());
  CHECK(mentions(schema_violations(schema, -3.0, "us"), "below the minimum"));
}

TEST_CASE("summary schema: single-rank and cluster runs write one summary.json schema", "[quick]")
{
  const json schema = summary_schema();
  dbosim::test::TempDir dir;
  int rc                  = 0;
  const std::string exe   = std::string(DBOSIM_BINARY);
  const std::string scens = std::string(DBOSIM_SOURCE_DIR) + "/scenarios/";
  run_shell(exe + " run " + scens + "default.yaml --out " + dir.path() + "/single > /dev/null 2>&1", &rc);
  REQUIRE(rc == 0);
  run_shell(exe + " run " + scens + "dsv3_decode_ep32_zipf_eplb.yaml --out " + dir.path() + "/cluster > /dev/null 2>&1",
            &rc);
  REQUIRE(rc == 0);
  const json single  = read_json(dir.path() + "/single/summary.json");
  const json cluster = read_json(dir.path() + "/cluster/summary.json");
  for (const std::string& v : schema_violations(schema, single))
    FAIL_CHECK("single-rank " << v);
  for (const std::string& v : schema_violations(schema, cluster))
    FAIL_CHECK("cluster " << v);

  // The cluster run loses nothing: every key of the single-rank summary, and its representative rank named.
  for (auto it = single.begin(); it != single.end(); ++it)
    CHECK(cluster.contains(it.key()));
  REQUIRE(cluster.contains("cluster"));
  const int rank = cluster["cluster"]["representative"]["rank"].get<int>();
  CHECK(rank >= 0);
  CHECK(rank < cluster["cluster"]["ep"].get<int>());
  CHECK(cluster["step_time_us"].get<double>() == Approx(cluster["cluster"]["step_time_us"].get<double>()).margin(1e-3));
  CHECK_FALSE(single.contains("cluster"));

  // The schema is not vacuous: the summary a cluster run wrote before (no overlap figures) is refused.
  json old = cluster;
  for (const char* k : {"exposed_comm_us", "overlap_us", "stream_busy_pct", "critical_path", "per_op"})
    old.erase(k);
  const auto v = schema_violations(schema, old);
  CHECK(v.size() == 5);
  CHECK(mentions(v, "required key 'exposed_comm_us' is missing"));
  json typo               = single;
  typo["overlap_us_typo"] = 1;
  CHECK(mentions(schema_violations(schema, typo), "/overlap_us_typo: not allowed here"));
}

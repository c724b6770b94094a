/* Every YAML reader meets a node of the wrong kind at every level of a shipped file: a plain value where a mapping or a
 * list stands, a mapping where a list or a value stands, a list where a mapping or a value stands. Only InputError
 * (exit 2, naming file, line and key) may come out: a yaml-cpp exception or any other escaping is a crash at the CLI.
 */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/ScenarioLoader.hpp"
#include "config/YamlMap.hpp"
#include "plan/PlanSpec.hpp"
#include "validate/CaseResult.hpp"
#include "validate/E2eCases.hpp"
#include "validate/RefCases.hpp"
#include "validate/TestbedOps.hpp"
#include "validate/TestbedShape.hpp"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

using namespace dbosim;
namespace fs = std::filesystem;

namespace {

/** One step from a node to a child: a mapping key or a list index. */
using Step = std::variant<std::string, std::size_t>;
using Path = std::vector<Step>;

std::string path_text(const Path& p)
{
  std::string s;
  for (const Step& step : p)
    s += std::holds_alternative<std::string>(step) ? "." + std::get<std::string>(step)
                                                   : "[" + std::to_string(std::get<std::size_t>(step)) + "]";
  return s.empty() ? "(top level)" : s;
}

/** Every node's path, depth first; the top level is the empty path. */
void collect(const YAML::Node& n, Path& at, std::map<std::size_t, std::vector<Path>>& by_depth)
{
  by_depth[at.size()].push_back(at);
  if (n.IsMap())
    for (const auto& kv : n) {
      if (!kv.first.IsScalar())
        continue;
      at.emplace_back(kv.first.Scalar());
      collect(kv.second, at, by_depth);
      at.pop_back();
    }
  else if (n.IsSequence())
    for (std::size_t i = 0; i < n.size(); ++i) {
      at.emplace_back(i);
      collect(n[i], at, by_depth);
      at.pop_back();
    }
}

/** `root` (cloned) with the node at `path` replaced by `value`. */
YAML::Node replaced(const YAML::Node& root, const Path& path, const YAML::Node& value)
{
  YAML::Node copy = YAML::Clone(root);
  if (path.empty())
    return YAML::Clone(value);
  YAML::Node cur = copy;
  for (std::size_t i = 0; i + 1 < path.size(); ++i)
    cur.reset(std::holds_alternative<std::string>(path[i]) ? cur[std::get<std::string>(path[i])]
                                                           : cur[std::get<std::size_t>(path[i])]);
  const Step& last = path.back();
  if (std::holds_alternative<std::string>(last))
    cur[std::get<std::string>(last)] = YAML::Clone(value);
  else
    cur[std::get<std::size_t>(last)] = YAML::Clone(value);
  return copy;
}

YAML::Node node_at(const YAML::Node& root, const Path& path)
{
  YAML::Node cur = root;
  for (const Step& s : path)
    cur.reset(std::holds_alternative<std::string>(s) ? cur[std::get<std::string>(s)] : cur[std::get<std::size_t>(s)]);
  return cur;
}

/** The wrong kinds for a node: each of value, mapping and list that it is not. */
std::vector<YAML::Node> wrong_kinds(const YAML::Node& n)
{
  const YAML::Node value   = YAML::Load("7");
  const YAML::Node mapping = YAML::Load("{x: 1}");
  const YAML::Node list    = YAML::Load("[1, 2]");
  if (n.IsMap())
    return {value, list};
  if (n.IsSequence())
    return {value, mapping};
  return {mapping, list};
}

/** A reader of one kind of file: the shipped file it starts from, the name the reader needs the file to have, the call,
 *  and how many nodes of each depth are mutated (evenly spaced, the first and last included; every node where the file
 *  has fewer: only the 12,500-node profile is sampled). */
struct Reader {
  std::string name;
  std::string seed; ///< relative to the source folder
  std::string file_name;
  std::function<void(const std::string& path)> read;
  std::size_t per_depth = 1000;
};

std::vector<Reader> readers()
{
  return {
      {"scenario", "scenarios/default.yaml", "s.yaml", [](const std::string& p) { load_scenario(p); }},
      {"serving scenario", "scenarios/dsv3_serving_ep8_c64.yaml", "s.yaml",
       [](const std::string& p) { load_scenario(p); }},
      {"sweep scenario", "scenarios/dsv3_serving_ep_sweep.yaml", "s.yaml",
       [](const std::string& p) { load_scenario(p); }},
      {"hardware profile", "hwprofiles/h200.yaml", "hw.yaml", [](const std::string& p) { load_hw_profile(p); }, 24},
      {"network facts", "hwprofiles/network/h200.yaml", "net.yaml",
       [](const std::string& p) { load_network_facts(p); }},
      {"model", "models/zoo/deepseek-v3.yaml", "m.yaml", [](const std::string& p) { load_model_zoo(p); }},
      {"plan", "plans/dsv3_decode_h200_b200.yaml", "plan.yaml",
       [](const std::string& p) {
         test::TempDir scratch;
         plan::load_plan(p, scratch.path());
       }},
      {"reference cases", "validate/cases/deepep_low_latency.yaml", "case.yaml",
       [](const std::string& p) { validate::run_reference_cases(fs::path(p).parent_path().string()); }},
      {"e2e cases", "validate/cases/e2e_vllm_async_combine_gb300.yaml", "e2e_case.yaml",
       [](const std::string& p) { validate::check_e2e_cases(fs::path(p).parent_path().string()); }},
      {"testbed shapes", "validate/testbed/shapes.yaml", "shapes.yaml",
       [](const std::string& p) { validate::load_testbed_shapes(p); }},
      {"external testbed op list", "validate/testbed/ep/ep1_decode_t16_balanced__dbo.yaml", "ops.yaml",
       [](const std::string& p) { validate::load_testbed_ops(p); }},
      {"validate baseline", "validate/baseline.yaml", "baseline.yaml",
       [](const std::string& p) { validate::load_baseline_file(p); }},
  };
}

std::vector<Path> sample(const std::vector<Path>& all, std::size_t per_depth)
{
  if (all.size() <= per_depth)
    return all;
  std::vector<Path> out;
  for (std::size_t i = 0; i < per_depth; ++i)
    out.push_back(all[i * (all.size() - 1) / (per_depth - 1)]);
  return out;
}

} // namespace

// [slow]: the Release build runs it (~80 s under the sanitizers, where the fuzz targets read the same files).
TEST_CASE("readers: a node of the wrong kind at every level is an input error, never a yaml-cpp exception",
          "[slow][readers]")
{
  for (const Reader& r : readers()) {
    const std::string seed = std::string(DBOSIM_SOURCE_DIR) + "/" + r.seed;
    const YAML::Node root  = YAML::LoadFile(seed);
    {
      test::TempDir dir; // the readers of a folder read every file there: the file alone, under the reader's name
      fs::copy_file(seed, dir.path() + "/" + r.file_name);
      REQUIRE_NOTHROW(r.read(dir.path() + "/" + r.file_name)); // the shipped file reads
    }
    std::map<std::size_t, std::vector<Path>> by_depth;
    Path at;
    collect(root, at, by_depth);
    REQUIRE(by_depth.size() >= 2); // a file with levels to mutate
    for (const auto& [depth, paths] : by_depth)
      for (const Path& p : sample(paths, r.per_depth))
        for (const YAML::Node& wrong : wrong_kinds(node_at(root, p))) {
          test::TempDir dir;
          YAML::Emitter out;
          out << replaced(root, p, wrong);
          const std::string file = dir.write(r.file_name, std::string(out.c_str()) + "\n");
          const std::string what = r.name + " " + path_text(p) + " := " + YAML::Dump(wrong);
          try {
            r.read(file);
          } catch (const InputError&) {
          } catch (const std::exception& e) {
            FAIL(what << ": " << typeid(e).name() << ": " << e.what());
          }
        }
  }
}

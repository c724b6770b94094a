/* The on-disk point cache (serving/PointDiskCache): an entry gives back its files only under its very key and while
 * every input it lists has the bytes it had; another key, a changed input, and an entry cut at any byte are misses
 * with a note. End to end: a plan run a second time over its --step-cache runs none of its points and writes the
 * same points.csv, and a changed input file runs them again. */
#include "RunShell.hpp"
#include "TempDir.hpp"
#include "base/ContentHash.hpp"
#include "serving/PointDiskCache.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace dbosim;
using namespace dbosim::serving;
namespace fs = std::filesystem;

namespace {

std::string read(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("serving::PointDiskCache: files back under their key, a changed input or a cut entry misses", "[quick]")
{
  test::TempDir dir;
  const std::string input = dir.write("profile.yaml", "name: a\n");
  const std::string key   = point_key("model: deepseek-v3\nseed: 1\n", "auto");
  const std::vector<PointFile> files{{"log.txt", "line 1\nline 2 with no newline"},
                                     {"empty.csv", ""},
                                     {"summary.json", "{\"serving\": {\"x\": 1.5}}\n"}};
  REQUIRE(PointDiskCache(dir.path()).store(key, {{input, content_hash("name: a\n")}}, files));

  std::string note;
  const auto hit = PointDiskCache(dir.path()).find(key, note);
  REQUIRE(hit);
  CHECK(*hit == files);
  CHECK(note.empty());

  // Another scenario text or engine: no entry, no note.
  CHECK(!PointDiskCache(dir.path()).find(point_key("model: deepseek-v3\nseed: 2\n", "auto"), note));
  CHECK(note.empty());
  CHECK(!PointDiskCache(dir.path()).find(point_key("model: deepseek-v3\nseed: 1\n", "replay"), note));

  // An entry under another key's name (a hash collision): compared whole, a miss.
  const std::string other = point_key("model: other\n", "auto");
  fs::copy_file(PointDiskCache(dir.path()).entry_path(key), PointDiskCache(dir.path()).entry_path(other));
  CHECK(!PointDiskCache(dir.path()).find(other, note));
  CHECK(note.find("another key") != std::string::npos);

  // The input's bytes changed: a miss naming it; back to its bytes: a hit again.
  dir.write("profile.yaml", "name: a\n# edited\n");
  CHECK(!PointDiskCache(dir.path()).find(key, note));
  CHECK(note.find("profile.yaml changed") != std::string::npos);
  fs::remove(input);
  CHECK(!PointDiskCache(dir.path()).find(key, note)); // gone: a miss too
  dir.write("profile.yaml", "name: a\n");
  CHECK(PointDiskCache(dir.path()).find(key, note));

  // Cut at every byte (a write killed half-way, a full disk): never a hit.
  const std::string entry = PointDiskCache(dir.path()).entry_path(key);
  const std::string whole = read(entry);
  for (std::size_t n = 0; n < whole.size(); ++n) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << whole.substr(0, n);
    INFO("cut at " << n << " of " << whole.size());
    CHECK(!PointDiskCache(dir.path()).find(key, note));
    CHECK(!note.empty());
  }
  // A byte of a stored file's length changed: its count no longer lands on the record's end.
  std::string bad = whole;
  bad.replace(bad.find("file 0 empty"), 12, "file 1 empty");
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << bad;
  CHECK(!PointDiskCache(dir.path()).find(key, note));
}

TEST_CASE(
    "cli: a plan run again over its --step-cache runs no point and writes the same points.csv (a changed input reruns)",
    "[slow][plan]")
{
  test::TempDir dir;
  const std::string profile = dir.path() + "/profile.yaml";
  fs::copy_file(std::string(DBOSIM_SOURCE_DIR) + "/hwprofiles/h200.yaml", profile);
  const std::string plan  = dir.write("plan.yaml", "model: deepseek-v3\nhardware: " + profile + R"(
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 32, max_concurrency: 32, random_input_len: 256,
           random_output_len: 8}
overlap: {enable_dbo: false, all2all_backend: deepep_low_latency}
serving: {step_trace: false, exact_samples: 2}
seed: 1
sweep:
  overlap.enable_dbo: [false, true]
plan:
  demand: {output_tokens_per_s: 20000}
  slo: {p99_itl_ms: 1000, p99_ttft_ms: 60000}
)");
  const std::string cache = dir.path() + "/cache";
  auto run_plan           = [&](const std::string& out, const std::string& cache_flag) {
    int rc                = 0;
    const std::string log = test::run_shell(std::string(DBOSIM_BINARY) + " plan " + plan + " -j 2 --out " + dir.path() +
                                                          "/" + out + cache_flag + " 2>&1",
                                                      &rc);
    CHECK(rc == 0);
    return log;
  };
  run_plan("plain", "");
  const std::string cold = run_plan("cold", " --step-cache " + cache);
  CHECK(cold.find("point cache:") == std::string::npos);
  // The workers saved their groups' step shapes too (once a group, serving::save_step_disk_tables).
  std::size_t step_tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache))
    step_tables += entry.path().extension() == ".steps" ? 1 : 0;
  CHECK(step_tables > 0);
  const std::string warm = run_plan("warm", " --step-cache " + cache);
  CHECK(warm.find("point cache: 2 of 2 points read from") != std::string::npos);
  const std::string expected = read(dir.path() + "/plain/points.csv");
  REQUIRE(!expected.empty());
  CHECK(read(dir.path() + "/cold/points.csv") == expected);
  CHECK(read(dir.path() + "/warm/points.csv") == expected);
  CHECK(read(dir.path() + "/warm/report.md") == read(dir.path() + "/plain/report.md"));
  CHECK(read(dir.path() + "/warm/ranks/0/sweep/points/0001/summary.json") ==
        read(dir.path() + "/plain/ranks/0/sweep/points/0001/summary.json"));

  std::ofstream(profile, std::ios::app) << "# edited: same numbers, other bytes\n";
  const std::string changed = run_plan("changed", " --step-cache " + cache);
  CHECK(changed.find("point cache:") == std::string::npos);
  CHECK(changed.find("profile.yaml changed since") != std::string::npos);
  CHECK(read(dir.path() + "/changed/points.csv") == expected);
}

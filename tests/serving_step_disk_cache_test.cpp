/* The on-disk step cache (serving/StepDiskCache): shapes come back bit for bit, only under the very key they were
 * written with; a damaged file or another key's is a miss, never an error; an oracle with the cache on simulates a
 * shape the cache holds no more; and the digest of a scenario's input files follows their bytes, not their paths. */
#include "TempDir.hpp"
#include "base/ContentHash.hpp"
#include "config/InputFile.hpp"
#include "config/ScenarioLoader.hpp"
#include "serving/EngineOracle.hpp"
#include "serving/StepDiskCache.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

using namespace dbosim;
using namespace dbosim::serving;
namespace fs = std::filesystem;

namespace {

StepKey key_of(int tokens, int context, bool unsplit = false)
{
  StepKey k;
  k.phase       = models::Phase::decode;
  k.tokens      = tokens;
  k.batch       = tokens;
  k.context_len = context;
  k.dp_unsplit  = unsplit;
  return k;
}

StepTime odd_time()
{
  StepTime t;
  t.step_us         = 1.0 / 3.0;
  t.exposed_comm_us = 1e-300;
  t.overlap_us      = 12345.678901234567;
  t.hot_rank_load   = 1.549;
  t.ubatches        = 2;
  t.cuda_graph      = true;
  for (std::size_t k = 0; k < t.per_op_us.size(); ++k)
    t.per_op_us[k] = 0.1 * double(k + 1);
  return t;
}

bool same_bits(const StepTime& a, const StepTime& b)
{
  return a.step_us == b.step_us && a.exposed_comm_us == b.exposed_comm_us && a.overlap_us == b.overlap_us &&
         a.draft_us == b.draft_us && a.step_work_us == b.step_work_us && a.expert_spin_us == b.expert_spin_us &&
         a.hot_rank_load == b.hot_rank_load && a.ubatches == b.ubatches && a.cuda_graph == b.cuda_graph &&
         a.per_op_us == b.per_op_us;
}

std::string only_file(const std::string& dir)
{
  std::string found;
  for (const auto& e : fs::directory_iterator(dir))
    found = e.path().string();
  return found;
}

} // namespace

TEST_CASE("serving::StepDiskTable: exact round trip under its own key only, damage is a miss", "[quick]")
{
  test::TempDir dir;
  const StepTime t = odd_time();
  RankWork w;
  w.attention_us = 2.0 / 7.0;
  w.draft_us     = 3.5;
  {
    StepDiskTable a(dir.path(), "owner A");
    a.put(key_of(8, 1024), t);
    a.put(key_of(8, 1024, true), w);
    REQUIRE(a.save());
  }
  StepDiskTable again(dir.path(), "owner A");
  REQUIRE(again.time(key_of(8, 1024)));
  CHECK(same_bits(*again.time(key_of(8, 1024)), t));
  CHECK(!again.time(key_of(8, 1024, true)));
  REQUIRE(again.work(key_of(8, 1024, true)));
  CHECK(again.work(key_of(8, 1024, true))->attention_us == w.attention_us);
  CHECK(again.work(key_of(8, 1024, true))->draft_us == w.draft_us);
  CHECK(!StepDiskTable(dir.path(), "owner B").time(key_of(8, 1024)));

  // A file cut in the middle of a record, or holding another key under the same name, is read as empty.
  const std::string file = only_file(dir.path());
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(file) << text.substr(0, text.size() - 5);
  CHECK(!StepDiskTable(dir.path(), "owner A").time(key_of(8, 1024)));
  std::string other = text;
  other.replace(other.find("owner A"), 7, "owner Z");
  std::ofstream(file) << other;
  CHECK(!StepDiskTable(dir.path(), "owner A").time(key_of(8, 1024)));
  // A writer merges what the file holds when it saves: two tables of one owner keep both shapes.
  fs::remove(file);
  StepDiskTable first(dir.path(), "owner A"), second(dir.path(), "owner A");
  first.put(key_of(1, 64), t);
  second.put(key_of(2, 64), t);
  REQUIRE(first.save());
  REQUIRE(second.save());
  StepDiskTable both(dir.path(), "owner A");
  CHECK(both.time(key_of(1, 64)));
  CHECK(both.time(key_of(2, 64)));
}

TEST_CASE("serving::InputDigest: the input files' bytes, not their paths, and not the excepted file", "[quick]")
{
  test::TempDir dir;
  const std::string a = dir.write("a.yaml", "x: 1\n"), b = dir.write("b.yaml", "x: 1\n"),
                    c = dir.write("c.yaml", "x: 2\n"), s = dir.write("s.yaml", "y: 1\n");
  auto digest = [&](const std::string& file, const std::string& scenario_text) {
    std::ofstream(s) << scenario_text;
    const InputDigest d;
    read_input_file(s);
    read_input_file(file);
    return d.hex(s);
  };
  CHECK(digest(a, "y: 1\n") == digest(b, "y: 1\n"));
  CHECK(digest(a, "y: 1\n") != digest(c, "y: 1\n"));
  CHECK(digest(a, "y: 1\n") == digest(a, "y: 2\n"));
}

TEST_CASE("serving::EngineOracle: with the step cache on, a shape it holds is not simulated again", "[quick]")
{
  test::TempDir dir;
  const std::string cache = dir.path() + "/cache";
  set_step_cache_dir(cache, "--step-cache");
  REQUIRE(step_cache_dir() == fs::absolute(cache).string());
  const Scenario s = load_scenario(dir.write("s.yaml", "model: deepseek-v3\nhardware: h200\ncluster: {nodes: 1, "
                                                       "gpus_per_node: 8}\nparallel: {dp: 8, ep: 8, tp: 1}\nworkload: "
                                                       "{phase: decode, tokens_per_rank: 1, num_prompts: 4}\n"));
  const std::vector<StepKey> keys{key_of(4, 512), key_of(16, 2048)};
  std::vector<StepTime> first;
  {
    EngineOracle o(s, 1, {}, sim::EngineKind::automatic);
    first = o.simulate(keys);
    CHECK(o.simulated() == 2);
  }
  REQUIRE(!only_file(cache).empty());
  EngineOracle again(s, 1, {}, sim::EngineKind::automatic);
  const std::vector<StepTime> second = again.simulate(keys);
  CHECK(again.simulated() == 0);
  for (std::size_t i = 0; i < keys.size(); ++i)
    CHECK(same_bits(first[i], second[i]));
  unsetenv("DBOSIM_STEP_CACHE");
}

TEST_CASE("serving::dbosim_build_id: the executable and every shared library it runs on", "[quick]")
{
  const std::string& text = serving::build_identity_text();
  CHECK(text.rfind("exe ", 0) == 0);
  // SimGrid prices the shapes the replay cannot: another SimGrid under the same executable is another build
  CHECK(text.find("libsimgrid") != std::string::npos);
  for (std::size_t at = text.find("\nlib "); at != std::string::npos; at = text.find("\nlib ", at + 1))
    CHECK(text.compare(at + 5, 1, "/") == 0); // an absolute path, then its size and modification time
  CHECK(serving::dbosim_build_id() == fmt::format("{:016x}", content_hash(text)));
  CHECK(serving::dbosim_build_id().size() == 16);
}

TEST_CASE("serving::prune_step_cache: the least recently used entries go first, down to 90% of the cap", "[quick]")
{
  test::TempDir dir;
  const auto now = fs::file_time_type::clock::now();
  auto entry     = [&](const std::string& name, std::size_t bytes, int age_s) {
    const std::string path = dir.write(name, std::string(bytes, 'x'));
    fs::last_write_time(path, now - std::chrono::seconds(age_s));
    return path;
  };
  const std::string oldest = entry("a.steps", 400, 300);
  const std::string middle = entry("b.point", 400, 200);
  const std::string newest = entry("c.steps", 400, 100);
  const std::string other  = entry("notes.txt", 5000, 900); // not an entry: never counted, never removed

  const CachePrune under = prune_step_cache(dir.path(), 1200);
  CHECK(under.removed == 0);
  CHECK(under.bytes_before == 1200);
  CHECK(fs::exists(oldest));

  // 1,200 bytes over a 700-byte cap: down to 630 at most, the oldest first (two entries go, 400 bytes are left)
  const CachePrune over = prune_step_cache(dir.path(), 700);
  CHECK(over.removed == 2);
  CHECK(over.bytes_after == 400);
  CHECK(!fs::exists(oldest));
  CHECK(!fs::exists(middle));
  CHECK(fs::exists(newest));
  CHECK(fs::exists(other));

  SECTION("a load that finds its key makes a table the most recently used")
  {
    test::TempDir cache;
    {
      StepDiskTable t(cache.path(), "owner");
      t.put(key_of(8, 1024), odd_time());
      REQUIRE(t.save());
    }
    const std::string table = only_file(cache.path());
    fs::last_write_time(table, now - std::chrono::hours(1));
    const StepDiskTable again(cache.path(), "owner");
    CHECK(fs::last_write_time(table) > now - std::chrono::minutes(1));
  }
}

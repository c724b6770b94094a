/* dbosim — the on-disk step cache (`--step-cache DIR`, or DBOSIM_STEP_CACHE=DIR): the step times and rank work the
 * serving oracle computed, kept across runs, so that a second `dbosim plan` or sweep over points it has seen
 * re-simulates nothing. Off unless a folder is given.
 *
 * A table holds the shapes of one owner: the scenario's step fingerprint (its text without the request stream, the
 * model, profile and network it names, and the content digest of every file it read: profile, network facts, zoo
 * model, histogram; so precision, parallelism, backend, schedule and engine options are all in it), the engine and
 * its SimGrid options, and this dbosim build (the digest of its executable and the shared libraries it runs on: another
 * build, or another SimGrid under it, prices anew). Its file is DIR/<content_hash of that key>.steps, text: a header
 * line, the key's length and text (compared on load, so a collision is a miss), then one line per shape, "t" (a
 * StepTime) or "w" (a RankWork), the StepKey's fields and the values as hexadecimal floats (exact). A file that does
 * not parse, or holds another key, is ignored (every shape in it is simulated again); a shape is never priced from a
 * guess.
 *
 * Writers: a table is re-read and merged before each write, then written to a temporary sibling and renamed
 * (base/AtomicFile), so a reader sees a whole file, the old or the new; two writers at once may lose one's new
 * shapes (simulated again later), never mix them. */
#pragma once
#include "serving/StepKey.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace dbosim::serving {

/** @brief What this build is made of: the content_hash of its executable and each shared library it has mapped (path,
 *  size, modification time), one a line (read once a process). */
const std::string& build_identity_text();

/** @brief This dbosim build: the content_hash of build_identity_text(), in hex. */
const std::string& dbosim_build_id();

/** @brief The folder DBOSIM_STEP_CACHE names, or "" (the cache off). */
std::string step_cache_dir();

/** @brief Makes `dir` the cache folder of this process and its children (DBOSIM_STEP_CACHE, absolute): creates it and
 *  checks it takes a file. @throws InputError naming `flag` and the folder when it cannot. */
void set_step_cache_dir(const std::string& dir, const std::string& flag);

/** @brief What prune_step_cache did: the entries it removed and the folder's entry bytes before and after. */
struct CachePrune {
  std::size_t removed         = 0;
  std::uintmax_t bytes_before = 0;
  std::uintmax_t bytes_after  = 0;
};

/** @brief Keeps the cache folder's entries (the step tables, DIR/\*.steps, and the point entries, DIR/\*.point) under
 *  `max_bytes`: when they hold more, removes the least recently used (an entry's modification time, which a load that
 *  finds its key refreshes) until they hold at most 90% of it. Other files are left alone. A reader that loses an
 *  entry meanwhile sees a miss, which is always safe. */
CachePrune prune_step_cache(const std::string& dir, std::uintmax_t max_bytes);

/** @brief Marks a cache entry used now (its modification time), for prune_step_cache; a failure is ignored. */
void touch_cache_entry(const std::filesystem::path& file);

/** @brief One owner's shapes on disk (see above); kept in memory between loads while the file does not change. */
class StepDiskTable {
public:
  StepDiskTable(const std::string& dir, const std::string& owner);
  const StepTime* time(const StepKey& key) const;
  const RankWork* work(const StepKey& key) const;
  void put(const StepKey& key, const StepTime& t);
  void put(const StepKey& key, const RankWork& w);
  /** @brief Writes the shapes added since the last save (merged with what the file holds now); false when the
   *  write failed (the cache is then just colder). */
  bool save();

private:
  void load();
  std::filesystem::path file_;
  std::string key_;
  std::map<StepKey, StepTime> times_;
  std::map<StepKey, RankWork> work_;
  std::map<StepKey, StepTime> new_times_;
  std::map<StepKey, RankWork> new_work_;
};

/** @brief This process's table for `owner` in `dir` (one per owner, reloaded when its file changed since). */
StepDiskTable& step_disk_table(const std::string& dir, const std::string& owner);

/** @brief Saves every table this process opened (StepDiskTable::save): a worker of a sweep or plan saves once per
 *  group of points, not at each point (each save rewrites its owner's whole file). */
void save_step_disk_tables();

} // namespace dbosim::serving

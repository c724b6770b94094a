/* dbosim — the on-disk result cache of sweep and plan points, in the `--step-cache DIR` folder (DBOSIM_STEP_CACHE):
 * a point that an earlier run of this very build ran, on the same scenario text and the same input bytes, is not run
 * again; its output files come back as that run wrote them. Off unless a folder is given.
 *
 * An entry is keyed by (point_key) the point's full scenario text as the sweep wrote it (paths absolute), the engine
 * option, the data folder names resolve in, and this build: the content hash of the dbosim executable (every cost
 * model, engine table and default is compiled into it) plus the path, size and modification time of each shared
 * library the process has mapped (SimGrid, yaml-cpp, fmt: an upgraded library is another build). The entry also
 * lists every file the point's run read (config/InputFile's InputDigest: profile, model, network facts, histogram,
 * request trace) with the content hash of its bytes then; a lookup re-reads each and misses when one differs.
 *
 * Its file is DIR/<content_hash of the key>.point, text: a header line, the key's length and text (compared whole,
 * so a hash collision is a miss), one "input HASH PATH" line per file read, one "file LEN NAME" line per output
 * file followed by its LEN bytes and a newline, then "end". Anything else (a cut file, another key, a bad length) is
 * ignored with a note and the point runs; an entry is written whole to a temporary sibling and renamed
 * (base/AtomicFile). */
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dbosim::serving {

/** @brief One output file of a point: its name in the point's folder and its bytes. */
using PointFile = std::pair<std::string, std::string>;

/** @brief The build identity a point entry is keyed by (see above; computed once a process). */
const std::string& point_build_identity();

/** @brief The key of one point: its scenario text, the engine option, the data folder and point_build_identity(). */
std::string point_key(const std::string& scenario_text, const std::string& engine);

/** @brief One folder's point entries. Input files' hashes are read once per path and kept for the object's life (a
 *  sweep's inputs do not change while it runs). */
class PointDiskCache {
public:
  explicit PointDiskCache(std::string dir);
  /** @brief The output files stored under `key`, when its entry is whole, holds this very key and every input it
   *  lists still has the bytes it had. Otherwise nullopt, with `note` saying why an entry that exists was not used
   *  (empty when there is none). */
  std::optional<std::vector<PointFile>> find(const std::string& key, std::string& note);
  /** @brief Stores `files` under `key` with the inputs the run read (`inputs`: path -> content_hash); false when
   *  the write failed (the cache is then just colder). */
  bool store(const std::string& key, const std::map<std::string, std::uint64_t>& inputs,
             const std::vector<PointFile>& files) const;
  /** @brief The entry file of `key`. */
  std::string entry_path(const std::string& key) const;

private:
  std::optional<std::uint64_t> input_hash(const std::string& path);
  std::string dir_;
  std::map<std::string, std::optional<std::uint64_t>> seen_;
};

} // namespace dbosim::serving

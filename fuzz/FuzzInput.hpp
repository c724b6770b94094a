/* dbosim fuzzing — our loaders read files: each input is written to a per-process temp file first, and what a
 * process wrote there is removed when it exits. */
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <unistd.h>

namespace dbosim::fuzz {

/** @brief The temp paths this process made (files and its scratch folder), removed at exit: a run over a corpus
 *  leaves nothing in the temp folder. */
class ScratchPaths {
public:
  static ScratchPaths& of_process()
  {
    static ScratchPaths paths;
    return paths;
  }
  /** @brief `name` in the temp folder ($TMPDIR or /tmp), prefixed with this process's id; removed at exit. */
  std::string make(const std::string& name)
  {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("dbosim-fuzz-" + std::to_string(::getpid()) + name)).string();
    made_.insert(path);
    return path;
  }
  ScratchPaths(const ScratchPaths&)            = delete;
  ScratchPaths& operator=(const ScratchPaths&) = delete;
  ~ScratchPaths()
  {
    for (const std::string& p : made_) {
      std::error_code ec; // best effort: a path already gone is fine
      std::filesystem::remove_all(p, ec);
    }
  }

private:
  ScratchPaths() = default;
  std::set<std::string> made_;
};

/** @brief A per-process scratch folder (dbosim-fuzz-PID.d in the temp folder), created on first use. */
inline std::string scratch_dir()
{
  const std::string dir = ScratchPaths::of_process().make(".d");
  std::filesystem::create_directories(dir);
  return dir;
}

/** @brief Writes the fuzzer's bytes to `path` (truncating) and returns it. */
inline std::string write_input(const std::string& path, const uint8_t* data, size_t size)
{
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

/** @brief Writes the fuzzer's bytes to a temp file with `suffix` and returns its path (reused per process). */
inline std::string input_file(const uint8_t* data, size_t size, const std::string& suffix)
{
  return write_input(ScratchPaths::of_process().make(suffix), data, size);
}

} // namespace dbosim::fuzz

/* dbosim fuzzing — our loaders read files: each input is written to a per-process temp file first. */
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace dbosim::fuzz {

/** @brief A per-process scratch folder (/tmp/dbosim-fuzz-PID.d), created on first use. */
inline std::string scratch_dir()
{
  const std::string dir = "/tmp/dbosim-fuzz-" + std::to_string(::getpid()) + ".d";
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
  return write_input("/tmp/dbosim-fuzz-" + std::to_string(::getpid()) + suffix, data, size);
}

} // namespace dbosim::fuzz

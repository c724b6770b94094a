/* dbosim fuzzing — our loaders read files: each input is written to a per-process temp file first. */
#pragma once
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <unistd.h>

namespace dbosim::fuzz {

/** @brief Writes the fuzzer's bytes to a temp file with `suffix` and returns its path (reused per process). */
inline std::string input_file(const uint8_t* data, size_t size, const std::string& suffix)
{
  const std::string path = "/tmp/dbosim-fuzz-" + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

} // namespace dbosim::fuzz

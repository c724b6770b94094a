/* dbosim — the one rule for reading a user-supplied file: a regular file (or a pipe) read whole up to a size cap.
 * A directory, a missing or unreadable path, or a file past the cap (an endless device such as /dev/zero) is an
 * InputError (exit 2) naming the path, never a bad_alloc. */
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace dbosim {

/** Inputs that are hand-written or generated configs (scenarios, profiles, models, histograms, network facts). */
inline constexpr std::size_t max_config_file_bytes = std::size_t{64} << 20;
/** Inputs that are recordings (request traces, kernel traces, testbed recordings). */
inline constexpr std::size_t max_trace_file_bytes = std::size_t{1} << 30;

/** @brief Offset of the first byte of `text` that is not well-formed UTF-8 (overlong forms, surrogates and code
 *  points past U+10FFFF included), or std::string::npos when it all is. */
std::size_t first_invalid_utf8(const std::string& text);

/** @brief `path`'s bytes. @throws InputError when it is missing, unreadable, a directory, or longer than `max_bytes`
 *  (read at most max_bytes + 1 bytes, so an endless file stops there), or when the path itself is not UTF-8 (names
 *  and paths are written into JSON outputs, which must be UTF-8). */
std::string read_input_file(const std::string& path, std::size_t max_bytes = max_config_file_bytes);

/** @brief While one is alive, every file read_input_file reads on its thread adds its bytes' content_hash: what a
 *  loaded scenario's numbers depend on beyond its own text (profile, network facts, zoo model, histogram). Nests. */
class InputDigest {
public:
  InputDigest();
  ~InputDigest();
  InputDigest(const InputDigest&)            = delete;
  InputDigest& operator=(const InputDigest&) = delete;
  /** @brief One hex digest of the contents of the files read so far but `except` (their paths left out, so that the
   *  same bytes in another folder digest the same). */
  std::string hex(const std::string& except) const;
  /** @brief The files read so far: path -> content_hash of the bytes last read there. */
  const std::map<std::string, std::uint64_t>& files() const { return files_; }
  /** @brief Called by read_input_file for each file it returns. */
  static void record(const std::string& path, const std::string& bytes);

private:
  std::map<std::string, std::uint64_t> files_; ///< path -> content_hash of its bytes, the last read
  InputDigest* outer_;
};

/** @brief While one is alive, the files read on its thread are taken as fixed: a FileMemo that holds a file's value
 *  returns it without reading the file again (its bytes still go to the InputDigest alive, as a read's would). For a
 *  sweep's points, priced from one snapshot of the profiles, models and network facts they name. Nests. */
class FixedInputs {
public:
  FixedInputs();
  ~FixedInputs();
  FixedInputs(const FixedInputs&)            = delete;
  FixedInputs& operator=(const FixedInputs&) = delete;
  /** @brief True while a FixedInputs is alive on this thread. */
  static bool active();

private:
  bool before_;
};

} // namespace dbosim

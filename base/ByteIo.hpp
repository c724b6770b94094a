/* dbosim — bytes to and from files and pipes: a whole file read as it is, and pipe reads and writes that go on
 * through short transfers and EINTR (a pipe moves more than its buffer in pieces, as the other end reads). */
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace dbosim {

/** @brief The bytes of the file at `path`, or nothing when it cannot be opened or read. */
std::optional<std::string> read_file_bytes(const std::string& path);

/** @brief Writes all `n` bytes of `data` to `fd`; false when the reader is gone (or the write fails). */
bool write_all(int fd, const void* data, std::size_t n);

/** @brief Reads exactly `n` bytes from `fd` into `data`; false at the pipe's end before them (or on an error). */
bool read_all(int fd, void* data, std::size_t n);

} // namespace dbosim

#include "base/ByteIo.hpp"

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace dbosim {

std::optional<std::string> read_file_bytes(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad())
    return std::nullopt;
  return std::move(s).str();
}

namespace {
/** Moves all `n` bytes through `io` (::read or ::write), which may move fewer at a time or be interrupted (EINTR). */
template <class Byte, class Io> bool transfer_all(int fd, Byte* p, std::size_t n, Io io)
{
  while (n > 0) {
    const ssize_t moved = io(fd, p, n);
    if (moved < 0 && errno == EINTR)
      continue;
    if (moved <= 0)
      return false;
    p += moved;
    n -= static_cast<std::size_t>(moved);
  }
  return true;
}
} // namespace

bool write_all(int fd, const void* data, std::size_t n)
{
  return transfer_all(fd, static_cast<const char*>(data), n, ::write);
}

bool read_all(int fd, void* data, std::size_t n) { return transfer_all(fd, static_cast<char*>(data), n, ::read); }

} // namespace dbosim

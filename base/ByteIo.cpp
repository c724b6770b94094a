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

bool write_all(int fd, const void* data, std::size_t n)
{
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t n)
{
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

} // namespace dbosim

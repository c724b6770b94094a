#include "config/OutputDir.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <unistd.h>

namespace dbosim {

void prepare_out_dir(const std::string& dir, const std::string& flag)
{
  namespace fs = std::filesystem;
  if (dir.empty())
    throw InputError(flag, "an empty path names no folder (it would write into the filesystem root)");
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    throw InputError(dir, fmt::format("{}: exists and is not a folder", flag));
  if (!fs::exists(st)) {
    fs::create_directories(dir, ec);
    if (ec)
      throw InputError(dir, fmt::format("{}: cannot create the folder: {}", flag, ec.message()));
  }
  // Write one byte to a probe file and sync it: a read-only or immutable folder fails at open, a full disk at write
  // or fsync. The probe is removed on every path.
  std::string probe = (fs::path(dir) / ".dbosim-probe.XXXXXX").string();
  const int fd      = ::mkstemp(probe.data());
  if (fd < 0)
    throw InputError(dir, fmt::format("{}: cannot write in the folder: {}", flag, std::strerror(errno)));
  const bool written = ::write(fd, "x", 1) == 1 && ::fsync(fd) == 0;
  const int err      = errno;
  ::close(fd);
  ::unlink(probe.c_str());
  if (!written)
    throw InputError(dir, fmt::format("{}: cannot write in the folder: {}", flag, std::strerror(err)));
}

} // namespace dbosim

#include "base/AtomicFile.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace dbosim {

void write_file_atomic(const std::string& path, const std::string& content)
{
  write_file_atomic(path, [&](std::ostream& out) { out << content; });
}

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write)
{
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw InputError(path, fmt::format("cannot create the output folder: {}", ec.message()));
  }
  const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
  bool ok            = false;
  int err            = 0;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    err = errno;
    if (out) {
      try {
        write(out);
      } catch (...) {
        out.close();
        fs::remove(tmp, ec);
        throw;
      }
      out.flush();
      ok  = static_cast<bool>(out);
      err = errno;
    }
  }
  if (!ok) { // no *.tmp.* left behind on any failure (a full disk, a read-only folder)
    fs::remove(tmp, ec);
    throw InputError(path, fmt::format("cannot write the output file: {}", err ? std::strerror(err) : "write failed"));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw InputError(path, fmt::format("cannot rename {} into place: {}", tmp.string(), ec.message()));
  }
}

} // namespace dbosim

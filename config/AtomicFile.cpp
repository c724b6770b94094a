#include "config/AtomicFile.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace dbosim {

void write_file_atomic(const std::string& path, const std::string& content)
{
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.has_parent_path())
    fs::create_directories(target.parent_path());
  const fs::path tmp = target.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw std::runtime_error("cannot write " + tmp.string());
    out << content;
    out.flush();
    if (!out)
      throw std::runtime_error("short write to " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp);
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + path + ": " + ec.message());
  }
}

} // namespace dbosim

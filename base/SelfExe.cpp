#include "base/SelfExe.hpp"

#include "base/InputError.hpp"

#include <climits>
#include <unistd.h>

namespace dbosim {

std::string self_exe(const std::string& command)
{
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    throw InternalError(command + ": cannot find this program (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

} // namespace dbosim

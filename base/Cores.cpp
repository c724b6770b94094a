#include "base/Cores.hpp"

#include <sched.h>
#include <unistd.h>

namespace dbosim {

namespace {
int online_cores()
{
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}
} // namespace

int usable_cores()
{
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return online_cores();
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : online_cores();
}

bool bound_to_fewer_cores() { return usable_cores() < online_cores(); }

} // namespace dbosim

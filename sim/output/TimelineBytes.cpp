#include "sim/output/TimelineBytes.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace dbosim::sim {

static_assert(std::is_trivially_copyable_v<OpRecord>, "a child ships op records as their bytes");

std::string timeline_bytes(const Timeline& tl)
{
  const std::uint64_t n = tl.ops.size(), steps = tl.step_time_us.size();
  std::string out;
  out.reserve(2 * sizeof n + n * sizeof(OpRecord) + steps * sizeof(double));
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(&steps), sizeof steps);
  if (n > 0) // an empty vector's data() may be null, which append/memcpy must not be given
    out.append(reinterpret_cast<const char*>(tl.ops.data()), n * sizeof(OpRecord));
  if (steps > 0)
    out.append(reinterpret_cast<const char*>(tl.step_time_us.data()), steps * sizeof(double));
  return out;
}

Timeline timeline_from_bytes(const std::string& bytes)
{
  std::uint64_t n = 0, steps = 0;
  if (bytes.size() < 2 * sizeof n)
    throw InternalError(fmt::format("a timeline of {} bytes is too short for its header", bytes.size()));
  std::memcpy(&n, bytes.data(), sizeof n);
  std::memcpy(&steps, bytes.data() + sizeof n, sizeof steps);
  if (bytes.size() != 2 * sizeof n + n * sizeof(OpRecord) + steps * sizeof(double))
    throw InternalError(fmt::format("a timeline of {} ops and {} steps cannot be {} bytes", n, steps, bytes.size()));
  Timeline tl;
  tl.ops.resize(n);
  tl.step_time_us.resize(steps);
  if (n > 0)
    std::memcpy(tl.ops.data(), bytes.data() + 2 * sizeof n, n * sizeof(OpRecord));
  if (steps > 0)
    std::memcpy(tl.step_time_us.data(), bytes.data() + 2 * sizeof n + n * sizeof(OpRecord), steps * sizeof(double));
  return tl;
}

std::string cluster_timeline_bytes(const ClusterTimeline& ct)
{
  Timeline steps;
  steps.step_time_us = ct.step_time_us;
  std::string out    = timeline_bytes(steps);
  for (const Timeline& tl : ct.classes) {
    const std::string one = timeline_bytes(tl);
    const std::size_t n   = one.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += one;
  }
  return out;
}

ClusterTimeline cluster_timeline_from_bytes(const std::string& bytes)
{
  auto take = [&](std::size_t at, std::size_t n) {
    if (at + n > bytes.size())
      throw InternalError(fmt::format("a cluster timeline of {} bytes ends early (at {})", bytes.size(), at));
    return bytes.substr(at, n);
  };
  const std::string head = take(0, 2 * sizeof(std::uint64_t));
  std::uint64_t steps    = 0;
  std::memcpy(&steps, head.data() + sizeof steps, sizeof steps);
  const std::size_t head_n = 2 * sizeof steps + steps * sizeof(double);
  ClusterTimeline ct;
  ct.step_time_us = timeline_from_bytes(take(0, head_n)).step_time_us;
  std::size_t at  = head_n;
  while (at < bytes.size()) {
    std::size_t n = 0;
    std::memcpy(&n, take(at, sizeof n).data(), sizeof n);
    at += sizeof n;
    ct.classes.push_back(timeline_from_bytes(take(at, n)));
    at += n;
  }
  return ct;
}

} // namespace dbosim::sim

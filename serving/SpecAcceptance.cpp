#include "serving/SpecAcceptance.hpp"

namespace dbosim::serving {

namespace {
std::uint64_t splitmix64(std::uint64_t x)
{
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
} // namespace

double acceptance_draw(std::uint64_t seed, int request_id, int generated, int position)
{
  std::uint64_t h = splitmix64(seed);
  h               = splitmix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(request_id)));
  h               = splitmix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(generated)));
  h               = splitmix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(position)));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

int accepted_drafts(const models::SpecDecodeSpec& spec, std::uint64_t seed, int request_id, int generated, int drafts)
{
  int accepted = 0;
  while (accepted < drafts &&
         acceptance_draw(seed, request_id, generated, accepted + 1) < spec.acceptance(accepted + 1))
    ++accepted;
  return accepted;
}

} // namespace dbosim::serving

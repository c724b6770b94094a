/* dbosim — the serving stack a GPU runs (a profile's platform.stack): CUDA or ROCm. */
#pragma once
#include <optional>
#include <string_view>

namespace dbosim::models {

/** @brief The serving stack of a GPU: graphs are CUDA graphs on cuda, HIP graphs on rocm. */
enum class Platform { cuda, rocm };

/** @brief "cuda" or "rocm": the profile's spelling. */
constexpr const char* platform_name(Platform p) { return p == Platform::rocm ? "rocm" : "cuda"; }

/** @brief The platform spelled `name`; nullopt when it is none. */
constexpr std::optional<Platform> platform_named(std::string_view name)
{
  for (Platform p : {Platform::cuda, Platform::rocm})
    if (name == platform_name(p))
      return p;
  return std::nullopt;
}

} // namespace dbosim::models

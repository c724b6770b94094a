/* dbosim — a 64-bit FNV-1a digest of bytes: the on-disk step cache names its files by it and keys them by the
 * contents of the inputs a step reads (config/InputFile's InputDigest). Not cryptographic: every file also stores the
 * full text of its key, which a reader compares, so a collision is a miss, never a wrong hit. */
#pragma once
#include <cstdint>
#include <string_view>

namespace dbosim {

inline constexpr std::uint64_t content_hash_seed = 0xcbf29ce484222325ULL; ///< FNV-1a 64's offset basis

/** @brief FNV-1a 64 of `bytes`, continuing from `h` (chain calls to digest several pieces). */
inline std::uint64_t content_hash(std::string_view bytes, std::uint64_t h = content_hash_seed)
{
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL; // FNV-1a 64's prime
  }
  return h;
}

} // namespace dbosim

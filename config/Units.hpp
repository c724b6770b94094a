/* dbosim — quantities with SimGrid-style unit strings ("450GBps", "400Gbps", "1us", "989Tf"). */
#pragma once
#include <string>

namespace dbosim {

/** @brief What a quantity measures; each parses to its SI base unit. */
enum class UnitKind {
  time,      ///< seconds: ns, us, ms, s
  bandwidth, ///< bytes per second: Bps kBps MBps GBps TBps (bytes) or bps kbps Mbps Gbps Tbps (bits)
  flops,     ///< flop per second: f kf Mf Gf Tf Pf
  bytes,     ///< bytes: B kB MB GB TB KiB MiB GiB TiB
};

/** @brief Parses `text` as a number followed by a unit of `kind`; returns the value in the SI base unit.
 *  @throws std::invalid_argument with a message naming the valid units. */
double parse_quantity(const std::string& text, UnitKind kind);

/** @brief The valid unit suffixes of `kind`, for error messages. */
std::string unit_names(UnitKind kind);

} // namespace dbosim

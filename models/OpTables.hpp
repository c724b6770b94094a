/* dbosim — measured kernel tables and curves of a HwProfile: lookup and interpolation.
 *
 * Interpolation on tokens (table_us), the method the whole project uses for measured tables:
 *  - exactly at a measured point: the measured duration;
 *  - between two points: piecewise linear in (tokens, us);
 *  - below the first point: clamped to the first point's duration (a kernel does not get faster than its
 *    smallest measured launch: launch latency and tile padding dominate there);
 *  - above the last point: linear throughput extrapolation, us = us_last * tokens / tokens_last (the kernel
 *    keeps the tokens-per-microsecond rate of its largest measured size).
 *
 * SM-scaling curves (speed_at_sms) are piecewise linear on SMs; below the first point the speed falls
 * proportionally to the SMs (speed_first * sms / sms_first), above the last it is clamped.
 *
 * Per-shape SM tables (speed_at_tokens) are piecewise linear on tokens and clamped at both ends (a speed ratio
 * has no throughput to extrapolate). */
#pragma once
#include "hw/HwProfile.hpp"

#include <map>
#include <string>

namespace dbosim::models {

/** @brief Indexes `hw.tables` by family (HwProfile::table_index); call after the last table is added. */
void index_tables(HwProfile& hw);

/** @brief Calls `visit(table)` for each table of `family`, in the profile's order, until it returns true. */
template <class Visit> void for_each_table_of(const HwProfile& hw, const std::string& family, Visit&& visit)
{
  if (hw.table_index && hw.table_index->count == hw.tables.size()) {
    const auto at = hw.table_index->positions.find(family);
    if (at != hw.table_index->positions.end())
      for (const std::size_t i : at->second)
        if (visit(hw.tables[i]))
          return;
    return;
  }
  for (const OpTable& t : hw.tables)
    if (t.family == family && visit(t))
      return;
}

/** @brief The table of `family` whose dims equal `dims` exactly, or nullptr. */
const OpTable* find_table(const HwProfile& hw, const std::string& family, const std::map<std::string, int>& dims);

/** @brief How a table value was obtained, for --explain. */
enum class TableLookup { exact, interpolated, clamped, extrapolated };
std::string table_lookup_name(TableLookup how);

/** @brief Duration in microseconds at `tokens` (>= 0) from a table curve (x = tokens, y = us); see file comment.
 *  @throws std::invalid_argument on an empty or non-increasing curve. */
double table_us(const Curve& curve, double tokens, TableLookup* how = nullptr);

/** @brief Relative speed at `sms` from an SM-scaling curve (x = SMs, y = speed); see file comment.
 *  @throws std::invalid_argument on an empty or non-increasing curve or a non-positive speed. */
double speed_at_sms(const Curve& curve, double sms);

/** @brief The per-shape SM table of `family` and `dims` measured at exactly `sms` SMs, or nullptr. */
const SmTable* find_sm_table(const HwProfile& hw, const std::string& family, const std::map<std::string, int>& dims,
                             int sms);

/** @brief Relative speed at `tokens` from a per-shape SM table (x = tokens, y = speed); see file comment.
 *  @throws std::invalid_argument on an empty or non-increasing curve or a non-positive speed. */
double speed_at_tokens(const Curve& curve, double tokens);

/** @brief "family[k=v,...]" for messages. */
std::string table_key(const std::string& family, const std::map<std::string, int>& dims);

} // namespace dbosim::models

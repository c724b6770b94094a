/* dbosim — the engine schedules, one row each: X(NAME, MICRO_BATCHES, ENGINES, DOC). A row's builder is sim::build_NAME
 * (sim/schedules/); sim/schedules/ScheduleRegistry binds each row to it. Header-only and free of sim types, so that the
 * scenario reader (config) checks overlap.schedule against the same rows without linking the engine. Adding a schedule:
 * one row here and its builder (docs/extending.md). A plan carries its schedule as a ScheduleId, the row's index; the
 * name is spelled only where it is read (scenario, --schedule) or printed. */
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

// clang-format off
#define DBOSIM_SCHEDULE_TABLE(X)                                                                                      \
  X(serial, 1, "vLLM, SGLang (no overlap)",                                                                           \
    "A0 A1 D MLP S C on the compute stream, no overlap")                                                              \
  X(async_combine, 1, "vLLM (a backend with finalize_async)",                                                \
    "combine on the comm stream while the shared expert runs; receiver joins by event")                               \
  X(dbo, 2, "vLLM (--enable-dbo)",                                                                                    \
    "vLLM Dual Batch Overlap: two micro-batches, docs/domain.md section 3 order")                                     \
  X(deepseek_decode, 2, "DeepSeek's inference system (profile-data decode)",                                          \
    "DeepSeek decode overlap: SHARED+ATTN-0 under DISPATCH, ATTN-1 under COMBINE")                                    \
  X(deepseek_prefill, 2, "DeepSeek's inference system (profile-data prefill)",                                        \
    "DeepSeek prefill overlap: ATTN under COMBINE/DISPATCH, MLP under DISPATCH/COMBINE")                              \
  X(sglang_tbo, 2, "SGLang (--enable-two-batch-overlap)",                                                             \
    "SGLang two-batch overlap: decode in DeepSeek's decode order, prefill stage by stage")
// clang-format on

namespace dbosim::sim {

#define DBOSIM_SCHEDULE_ID_ROW(name, ubatches, engines, doc) name,
/** @brief The engine schedules, in the table's order. */
enum class ScheduleId { DBOSIM_SCHEDULE_TABLE(DBOSIM_SCHEDULE_ID_ROW) };
#undef DBOSIM_SCHEDULE_ID_ROW

/** @brief A schedule's traits, without its builder. */
struct ScheduleTraits {
  const char* name;
  ScheduleId id;       ///< its enum value (row i is schedule i)
  int num_ubatches;    ///< the micro-batches the schedule needs
  const char* engines; ///< the serving engines (and their flags) that issue this order
  const char* doc;
};

#define DBOSIM_SCHEDULE_TRAITS_ROW(name, ubatches, engines, doc)                                                       \
  ScheduleTraits{#name, ScheduleId::name, ubatches, engines, doc},
/** @brief Every schedule's traits, in the table's order. */
inline constexpr ScheduleTraits schedule_traits[] = {DBOSIM_SCHEDULE_TABLE(DBOSIM_SCHEDULE_TRAITS_ROW)};
#undef DBOSIM_SCHEDULE_TRAITS_ROW

/** @brief The row of `id`. */
constexpr const ScheduleTraits& schedule_traits_of(ScheduleId id) { return schedule_traits[std::size_t(id)]; }
/** @brief The schedule's name: its overlap.schedule / --schedule spelling. */
constexpr const char* schedule_name(ScheduleId id) { return schedule_traits_of(id).name; }
/** @brief The schedule spelled `name`; nullopt when no row is. */
constexpr std::optional<ScheduleId> schedule_named(std::string_view name)
{
  for (const ScheduleTraits& t : schedule_traits)
    if (name == t.name)
      return t.id;
  return std::nullopt;
}

/** @brief Row i is schedule i, and every row names its micro-batches (1 or 2), the engines that run it and its order.
 */
constexpr bool schedule_rows_complete()
{
  std::size_t i = 0;
  for (const ScheduleTraits& t : schedule_traits)
    if (std::size_t(t.id) != i++ || (t.num_ubatches != 1 && t.num_ubatches != 2) || t.engines[0] == '\0' ||
        t.doc[0] == '\0')
      return false;
  return i > 0;
}
static_assert(schedule_rows_complete(), "a schedule row lacks its micro-batches, engines or order");

} // namespace dbosim::sim

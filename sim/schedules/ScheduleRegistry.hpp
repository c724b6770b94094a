/* dbosim — schedules by name: {name, one-line doc, factory, micro-batches}, like SimGrid's model description tables;
 * the rows are config/ScheduleTable.hpp's. */
#pragma once
#include "config/ScheduleTable.hpp"
#include "sim/schedules/Schedule.hpp"

#include <string>
#include <vector>

namespace dbosim::sim {

using ScheduleFactory = Schedule (*)(const StepPlan& plan);

struct ScheduleEntry {
  const char* name;
  ScheduleId id; ///< its row of config/ScheduleTable.hpp (entry i is schedule i)
  const char* doc;
  ScheduleFactory build;
  int num_ubatches;    ///< the micro-batches the schedule needs
  const char* engines; ///< the serving engines that issue this order (ScheduleTable.hpp)
};

/** @brief All schedules, in a fixed order. */
const std::vector<ScheduleEntry>& schedule_registry();
/** @brief "serial, async_combine, ...", for error messages. */
std::string schedule_names();
/** @brief The entry of `id` (every schedule has one). */
const ScheduleEntry& schedule_entry(ScheduleId id);
/** @brief Builds plan.schedule; InternalError for a plan whose micro-batch count the schedule cannot run. */
Schedule build_schedule(const StepPlan& plan);

// The builders (sim/schedules/*.cpp).
#define DBOSIM_SCHEDULE_BUILDER(name, ubatches, engines, doc) Schedule build_##name(const StepPlan& plan);
DBOSIM_SCHEDULE_TABLE(DBOSIM_SCHEDULE_BUILDER)
#undef DBOSIM_SCHEDULE_BUILDER

/** @brief Dense layers [0, first_k_dense) under two micro-batches: micro-batch 0 runs all of them (A0 A1 MLP each),
 *  then micro-batch 1 (a thread yields only at a collective). */
void issue_dense_layers_split(ScheduleBuilder& b);
/** @brief The MoE layers in DeepSeek's decode overlap order (sim/schedules/DeepSeek.cpp), which SGLang's decode
 *  two-batch overlap also runs. */
void issue_deepseek_decode_layers(ScheduleBuilder& b);

} // namespace dbosim::sim

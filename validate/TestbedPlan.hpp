/* dbosim validate — one overlap-testbed case (a shape under a schedule variant) as the engine's StepPlan, with op
 * durations from the calibrated profile only (GEMM tables, the gemm SM-scaling curve, the copy kernel's bandwidth
 * curve, the interference factors), and the same case as the plan file the CUDA testbed executes: the op list the
 * engine's schedule builder produces, in host issue order, with each op's stream and cross-stream waits. */
#pragma once
#include "hw/HwProfile.hpp"
#include "sim/plan/StepPlan.hpp"
#include "sim/schedules/Schedule.hpp"
#include "validate/TestbedOps.hpp"
#include "validate/TestbedShape.hpp"

#include <string>

namespace dbosim::validate {

/** @brief "<shape>__<variant>": the plan file's and the recorded trace's name. */
std::string testbed_case_name(const TestbedShape& s, const TestbedVariant& v);

/** @brief The engine's input for the case. The host issues the step ahead of the GPU (the testbed's gate), so the
 *  host is free (a graph-like replay with no launch cost); every kernel pays the profile's per-kernel GPU gap. */
sim::StepPlan testbed_step_plan(const TestbedShape& s, const TestbedVariant& v, const models::HwProfile& hw,
                                const std::string& gemm_family);

/** @brief The plan file for kernels/overlap_testbed.cu (format in that file's comment). */
std::string testbed_plan_text(const TestbedShape& s, const TestbedVariant& v, const sim::Schedule& sched,
                              const models::HwProfile& hw);

/** @brief The case as an external-testbed op list (validate/README.md, "External testbeds"): the schedule's ops in
 *  issue order named `L<layer>.u<ubatch>.<kind>`, each with every op it reads (data edges) as depends_on. */
TestbedOps testbed_ops_of(const TestbedShape& s, const TestbedVariant& v, const sim::Schedule& sched,
                          const models::HwProfile& hw);

/** @brief The op name testbed_ops_of gives the op of `kind` in `layer` for micro-batch `ubatch`. */
std::string testbed_op_name(const std::string& kind, int layer, int ubatch);

} // namespace dbosim::validate

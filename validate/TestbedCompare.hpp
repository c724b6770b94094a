/* dbosim validate — the overlap testbed: predictions of every shape x schedule variant (profile op durations replayed
 * by the engine) against the committed H200 recordings (validate/testbed/<case>.json from kernels/overlap_testbed.cu).
 * Rows: the makespan per case (group testbed_makespan/<variant>, checked at `makespan_tolerance_pct`) and each op
 * kind's total time per case (group testbed_op/<variant>, reported). Measured figures are medians over the recorded
 * repeats. */
#pragma once
#include "hw/HwProfile.hpp"
#include "validate/CaseResult.hpp"

#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief Writes DIR/<case>.txt plan files for every shape x variant of `shapes_path`; returns the paths. */
std::vector<std::string> write_testbed_plans(const std::string& shapes_path, const models::HwProfile& hw,
                                             const std::string& dir);

/** @brief Writes DIR/<case>.yaml, every shape x variant of testbed_dir/shapes.yaml as an external-testbed op list,
 *  and, for each case with a recording in `testbed_dir`, DIR/<case>.csv: the recording as op,start_us,end_us rows
 *  (repeat after repeat). Returns the paths written. */
std::vector<std::string> write_testbed_ops(const std::string& testbed_dir, const models::HwProfile& hw,
                                           const std::string& dir);

/** @brief Compares every case that has a recording in `testbed_dir` (shapes from testbed_dir/shapes.yaml); cases
 *  without a recording are listed in `missing`. */
std::vector<CaseResult> compare_testbed(const std::string& testbed_dir, const models::HwProfile& hw,
                                        double makespan_tolerance_pct, std::vector<std::string>& missing);

} // namespace dbosim::validate

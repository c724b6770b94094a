/* dbosim-calibrate fit OUT — what the records of a calibration job lack against the profile they are to replace.
 *
 * A profile fitted from records that miss a stage of calibrate/run_on_gpu.sh still loads: a missing FlashMLA run
 * leaves the mla_decode tables to the Triton/cuBLAS kernels, a missing DeepGEMM SM-scaling run leaves the gemm curves
 * to cuBLAS on green contexts, a missing graph-gaps run leaves the piecewise-graph host costs out. Such a profile
 * then fails the gate against the shipped one for a reason no kernel measured. check_stages compares the fit with the
 * reference profile part by part and names, for each part the reference has and the fit lacks, the stage to run. */
#pragma once
#include "calibrate/ProfileFit.hpp"
#include "hw/HwProfile.hpp"

#include <string>
#include <vector>

namespace dbosim::calib {

/** @brief The gate's factor after a fresh calibration of a GPU the project has a profile of: every shipped step under
 *  the new profile within this factor of the shipped one's. Two fresh H200 nodes measured 0.8% and 3.06% apart from
 *  the shipped profile, the second because its HBM streamed 3-4% slower (hwprofiles/README.md, "Reproduction check"):
 *  3% is how much two healthy GPUs of one model were seen to differ, not a fitted number. */
constexpr double kSameGpuStepRatio = 1.03;

/** @brief One part of the reference profile the records cannot supply, and the run_on_gpu.sh stage that measures it. */
struct MissingStage {
  std::string stage; ///< a stage of calibrate/run_on_gpu.sh: suite, torch, graph_gaps, flashmla, deepgemm, ...
  std::string part;  ///< what the reference has, e.g. "sm_scaling.gemm measured with DeepGEMM"
};

/** @brief The stages of calibrate/run_on_gpu.sh, in the order it runs them. */
const std::vector<std::string>& calibration_stages();

/** @brief Every part `reference` has that `fit` lacks: table families, tables and SM-scaling curves measured with an
 *  implementation the fit has none of (DeepGEMM, FlashMLA, PyTorch), per-shape SM tables, the piecewise-graph host
 *  costs, kernel floors, and a verification pass (`has_verify`). Empty when the records cover the reference. */
std::vector<MissingStage> check_stages(const FittedProfile& fit, const models::HwProfile& reference, bool has_verify);

/** @brief The message fit prints for missing stages: each part with its stage, then the command that runs them. */
std::string missing_stages_text(const std::vector<MissingStage>& missing, const std::string& reference_file,
                                const std::string& out_dir);

} // namespace dbosim::calib

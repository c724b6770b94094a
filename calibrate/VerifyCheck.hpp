/* dbosim — compares a fresh verification pass (dbosim-calibrate-run --verify) with the raw results a profile was
 * fitted from: same keys, relative difference of the medians. */
#pragma once
#include "calibrate/Measurement.hpp"

#include <string>
#include <vector>

namespace dbosim::calib {

struct VerifyRow {
  std::string key;
  double fitted_us = 0; ///< the run's median
  double fresh_us  = 0; ///< the verification pass's median
  double rel_diff  = 0; ///< fresh / fitted - 1
};

/** @brief One row per ok verification record whose key is in `fitted`; throws when none matches. */
std::vector<VerifyRow> compare_verification(const std::vector<Measurement>& fitted,
                                            const std::vector<Measurement>& fresh);

/** @brief One line: "gemm_bf16/k=7168,n=4096,tokens=4096 297.7 us, fresh 291.9 us (-1.9%); ...". */
std::string verification_note(const std::vector<VerifyRow>& rows);

} // namespace dbosim::calib

/* dbosim — physical bounds every op cost must respect. A violation is a bug in a model or a profile, never a
 * number to print: it throws CostBoundViolation naming the op (the CLI exits 1). */
#pragma once
#include "models/OpCost.hpp"

#include <stdexcept>

namespace dbosim::models {

class CostBoundViolation : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

/** @brief Checks one op: finite, non-negative figures; positive duration for any work; each kernel of a compute op
 *  no faster than the peak of its own compute dtype (OpKernelPart::compute_dtype) and the op no shorter than the sum
 *  of those floors (an op without kernel parts: no faster than the profile's highest peak); D/C no faster than the
 *  fastest link allows. */
void check_op_bounds(const OpCost& op, const HwProfile& hw);

/** @brief check_op_bounds on every op of a layer. */
void check_layer_bounds(const LayerCosts& layer, const HwProfile& hw);

} // namespace dbosim::models

/* dbosim — what the calibration driver needs from whoever runs kernels: the CUDA backend (kernels/) on a GPU,
 * a fake one in the tests. */
#pragma once
#include "calibrate/Measurement.hpp"

#include <stdexcept>

namespace dbosim::calib {

/** @brief Thrown by a backend when the device is unusable (sticky CUDA error): the driver stops without recording
 *  the measurement, so a resumed run retries it. Any other exception is recorded as "error: ..." and skipped. */
struct FatalBackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class MeasurementBackend {
public:
  virtual ~MeasurementBackend() = default;
  /** @brief Runs one point of the suite. Unsupported points come back with status "skipped: why". */
  virtual Measurement measure(const MeasureSpec& spec) = 0;
  /** @brief The run's provenance (GPU name, SMs, clocks, driver, CUDA/cuBLAS/NCCL versions, date) as info. */
  virtual std::map<std::string, std::string> environment() = 0;
};

} // namespace dbosim::calib

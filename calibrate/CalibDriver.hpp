/* dbosim — runs a calibration plan on a backend into a ResultsStore: skips keys already recorded (resume),
 * shows progress, stops cleanly at a time budget. Plain C++ (the GPU program links it too). */
#pragma once
#include "calibrate/MeasurementBackend.hpp"
#include "calibrate/ResultsStore.hpp"

#include <ostream>
#include <vector>

namespace dbosim::calib {

struct DriverOptions {
  double budget_s        = 0;       ///< stop starting new measurements after this many seconds (0 = no limit)
  long max_measurements  = -1;      ///< stop after this many new measurements (-1 = no limit; tests simulate a kill)
  std::ostream* progress = nullptr; ///< where progress lines go (nullptr = silent)
};

struct DriverSummary {
  long planned   = 0; ///< points in the plan
  long present   = 0; ///< already in the store when the run started (resumed)
  long measured  = 0; ///< recorded by this run (ok, skipped or error)
  long failed    = 0; ///< of those, status "error: ..."
  long remaining = 0; ///< not yet recorded when the run stopped
  bool complete() const { return remaining == 0; }
};

/** @brief Appends an "env" record (run number = env records so far + 1), then measures every point of `plan`
 *  whose key is not in `store`, in plan order. Throws what FatalBackendError the backend throws. */
DriverSummary run_plan(const std::vector<MeasureSpec>& plan, ResultsStore& store, MeasurementBackend& backend,
                       const DriverOptions& options);

} // namespace dbosim::calib

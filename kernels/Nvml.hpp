/* dbosim calibration kernels — clocks and driver version through NVML, loaded at run time (dlopen), so the
 * program builds without NVML headers; every call degrades to "unknown" when the library is missing. */
#pragma once
#include <string>

namespace dbosim::kern {

class Nvml {
public:
  Nvml();
  bool ok() const { return ok_; }
  /** @brief Current SM / memory clock in MHz (-1 when unknown). */
  int sm_clock_mhz() const;
  int mem_clock_mhz() const;
  int max_sm_clock_mhz() const;
  int max_mem_clock_mhz() const;
  std::string driver_version() const;
  /** @brief Power draw in watts (-1 when unknown). */
  double power_w() const;

private:
  bool ok_   = false;
  void* dev_ = nullptr;
  void* lib_ = nullptr;
};

} // namespace dbosim::kern

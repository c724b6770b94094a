/* dbosim calibration kernels — clocks and driver version through NVML, loaded at run time (dlopen), so the
 * program builds without NVML headers; every call degrades to "unknown" when the library is missing. */
#pragma once
#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

/** @brief The SM clock and power draw sampled through NVML every `period_us` on a thread of its own, for as long as
 *  the sampler lives (the last `keep_s` seconds are kept). Times are host steady-clock milliseconds (now_ms()). */
class NvmlSampler {
public:
  explicit NvmlSampler(int period_us = 1000, double keep_s = 60);
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&)            = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;
  static double now_ms();
  struct Sample {
    double t_ms, sm_mhz, power_w;
  };
  struct Window {
    double clk_min = -1, clk_med = -1, clk_max = -1, power_w = -1; ///< power: the median sample
    int samples = 0;
  };
  /** @brief Statistics of the samples taken between two now_ms() readings. */
  Window window(double from_ms, double to_ms) const;
  std::vector<Sample> samples(double from_ms, double to_ms) const;

private:
  void loop();
  Nvml nvml_;
  int period_us_;
  double keep_ms_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::deque<Sample> samples_;
  std::thread thread_;
};

} // namespace dbosim::kern

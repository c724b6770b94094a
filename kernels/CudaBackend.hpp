/* dbosim calibration kernels — the MeasurementBackend that runs the suite on a CUDA GPU: timing with CUDA events
 * after warm-up (median of repeats, the L2 flushed before each repeat), the SM clock read with every point; the
 * per-shape SM tables (sm_table) timed on a rested GPU (time_rested) or after a sustained load (time_settled). */
#pragma once
#include "calibrate/MeasurementBackend.hpp"
#include "kernels/ExecEnv.hpp"
#include "kernels/Nvml.hpp"

#include <functional>
#include <memory>

namespace dbosim::kern {

class CudaBackend : public calib::MeasurementBackend {
public:
  CudaBackend(int device, std::string git_commit, size_t arena_bytes);
  ~CudaBackend() override;
  calib::Measurement measure(const calib::MeasureSpec& spec) override;
  std::map<std::string, std::string> environment() override;
  int sm_count() const { return dev_.sm_count(); }

  /** @brief One launch of a prepared kernel into env.stream(), with what it computes and moves. */
  struct Prepared {
    std::function<void(ExecEnv&)> op;
    double flops = 0;     ///< useful floating-point operations of one launch
    double bytes = 0;     ///< fewest bytes one launch must move through HBM
    bool retile  = false; ///< true when the kernel is told its SM budget (cuBLAS SM-count target)
    std::string info;
  };

private:
  struct Timed {
    std::vector<double> samples_us;
    double loop_us = 0; ///< first repeat's start to last repeat's end (flushes included)
  };
  Prepared prepare(const std::string& family, const std::map<std::string, double>& p, ExecEnv& env);
  Timed run_reps(ExecEnv& env, const Prepared& k, int reps, bool flush);
  Timed time_op(ExecEnv& env, const Prepared& k, bool flush, int min_reps = 5, int max_reps = 50);
  /** @brief A running pipeline's timing: `settle_ms` of back-to-back launches of the kernel (the SM clock settles
   *  where this kernel on these SMs holds it; L2 as the previous launch left it), then back-to-back timed repeats
   *  for 25 ms (5-200), no flush. Fills `clock` with the NVML samples of the timed window. */
  Timed time_settled(ExecEnv& env, const Prepared& k, double settle_ms, NvmlSampler::Window& clock);
  /** @brief The overlap testbed's clock regime: after the warm-up, the GPU idles `rest_ms` (the power limiter lets the
   *  clock up again), then a short burst of timed repeats (about 15 ms, 3-50), the L2 flushed before each. Fills
   *  `clock` with the NVML samples of the timed window. */
  Timed time_rested(ExecEnv& env, const Prepared& k, double rest_ms, NvmlSampler::Window& clock);
  calib::Measurement measure_kernel(const std::string& family, const std::map<std::string, double>& p, ExecEnv& env);
  calib::Measurement host_cost(const std::string& what);
  calib::Measurement copy_kernel(const std::map<std::string, double>& p);
  calib::Measurement sm_scaling(const calib::MeasureSpec& spec);
  calib::Measurement interference(const calib::MeasureSpec& spec);
  char* alloc(size_t bytes);

  Device dev_;
  Nvml nvml_;
  NvmlSampler sampler_; ///< SM clock and power every millisecond (the clock window of a timed point)
  std::string git_commit_;
  char* arena_        = nullptr;
  size_t arena_bytes_ = 0, used_ = 0;
  void* flush_        = nullptr;
  size_t flush_bytes_ = 0;
  void* ws_           = nullptr;
  size_t ws_bytes_    = 64u << 20;
  float* one_         = nullptr;
};

/** @brief NCCL all-to-all / send-recv over all visible GPUs (NcclBench.cpp); "skipped" on one GPU or without NCCL. */
calib::Measurement nccl_measure(const calib::MeasureSpec& spec);
std::string nccl_version();

} // namespace dbosim::kern

/* dbosim calibration kernels — where kernels run: the primary context (all SMs) or a green context holding an SM
 * partition (cuDevSmResourceSplitByCount + cuGreenCtxCreate). Each environment has its own streams, cuBLAS and
 * cuBLASLt handles and events, all created while its context is current. */
#pragma once
#include "kernels/CudaCheck.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dbosim::kern {

class ExecEnv {
public:
  ExecEnv(CUcontext ctx, int sms, bool green);
  ~ExecEnv();
  ExecEnv(const ExecEnv&)            = delete;
  ExecEnv& operator=(const ExecEnv&) = delete;

  /** @brief Makes this environment's context current on the calling thread (before any launch into it). */
  void activate() const;
  cudaStream_t stream() const { return stream_; }
  cudaStream_t side_stream() const { return side_; }
  cublasHandle_t blas() const { return blas_; }
  cublasLtHandle_t lt() const { return lt_; }
  int sms() const { return sms_; }
  bool green() const { return green_; }
  /** @brief Event pairs for `n` timed repeats (grown on demand). */
  cudaEvent_t start_event(int i);
  cudaEvent_t end_event(int i);

private:
  void grow(int n);
  CUcontext ctx_;
  int sms_;
  bool green_;
  cudaStream_t stream_ = nullptr, side_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  std::vector<cudaEvent_t> start_, end_;
};

/** @brief A green-context split of the GPU: `compute` holds the requested SMs, `rest` the remaining ones. */
struct Partition {
  std::unique_ptr<ExecEnv> compute;
  std::unique_ptr<ExecEnv> rest;     ///< nullptr when nothing remains
  bool ignored_coscheduling = false; ///< the exact count needed CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING
  std::vector<CUgreenCtx> owned;
};

class Device {
public:
  explicit Device(int ordinal);
  ~Device();
  ExecEnv& primary() { return *primary_; }
  /** @brief The split with `sms` SMs for compute (cached); sms >= the GPU's SMs returns the primary context. */
  Partition& partition(int sms);
  /** @brief Environment with `sms` SMs: the primary context for the whole GPU, else a partition's compute part. */
  ExecEnv& env_for(int sms);
  const cudaDeviceProp& props() const { return props_; }
  CUdevice cu_device() const { return dev_; }
  int sm_count() const { return props_.multiProcessorCount; }
  /** @brief minSmPartitionSize and smCoscheduledAlignment of the device's SM resource. */
  std::string sm_resource_info() const;

private:
  int ordinal_;
  CUdevice dev_;
  cudaDeviceProp props_{};
  CUcontext primary_ctx_ = nullptr;
  std::unique_ptr<ExecEnv> primary_;
  std::map<int, Partition> partitions_;
};

} // namespace dbosim::kern

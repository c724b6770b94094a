/* dbosim calibration kernels — error checks for the CUDA runtime, driver, cuBLAS and cuBLASLt. A sticky device
 * error becomes FatalBackendError (the run stops and resumes later); any other failure a std::runtime_error. */
#pragma once
#include "calibrate/MeasurementBackend.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

namespace dbosim::kern {

[[noreturn]] void throw_cuda(cudaError_t e, const char* what, const char* file, int line);
[[noreturn]] void throw_cu(CUresult e, const char* what, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t e, const char* what, const char* file, int line);

} // namespace dbosim::kern

#define CUDA_CHECK(x)                                                                                                  \
  do {                                                                                                                 \
    cudaError_t e_ = (x);                                                                                              \
    if (e_ != cudaSuccess)                                                                                             \
      ::dbosim::kern::throw_cuda(e_, #x, __FILE__, __LINE__);                                                          \
  } while (0)
#define CU_CHECK(x)                                                                                                    \
  do {                                                                                                                 \
    CUresult e_ = (x);                                                                                                 \
    if (e_ != CUDA_SUCCESS)                                                                                            \
      ::dbosim::kern::throw_cu(e_, #x, __FILE__, __LINE__);                                                            \
  } while (0)
#define CUBLAS_CHECK(x)                                                                                                \
  do {                                                                                                                 \
    cublasStatus_t e_ = (x);                                                                                           \
    if (e_ != CUBLAS_STATUS_SUCCESS)                                                                                   \
      ::dbosim::kern::throw_cublas(e_, #x, __FILE__, __LINE__);                                                        \
  } while (0)
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

#include "kernels/CudaCheck.hpp"

namespace dbosim::kern {
namespace {

std::string where(const char* what, const char* file, int line)
{
  return std::string(what) + " at " + file + ":" + std::to_string(line);
}

bool sticky(cudaError_t e)
{
  return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorIllegalInstruction ||
         e == cudaErrorMisalignedAddress || e == cudaErrorHardwareStackError || e == cudaErrorAssert ||
         e == cudaErrorECCUncorrectable || e == cudaErrorUnknown || e == cudaErrorLaunchTimeout;
}

} // namespace

void throw_cuda(cudaError_t e, const char* what, const char* file, int line)
{
  std::string msg = std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ") in " + where(what, file, line);
  if (sticky(e))
    throw calib::FatalBackendError(msg);
  throw std::runtime_error(msg);
}

void throw_cu(CUresult e, const char* what, const char* file, int line)
{
  const char* name = nullptr;
  cuGetErrorName(e, &name);
  std::string msg =
      std::string(name ? name : "CUresult " + std::to_string(static_cast<int>(e))) + " in " + where(what, file, line);
  if (e == CUDA_ERROR_ILLEGAL_ADDRESS || e == CUDA_ERROR_LAUNCH_FAILED)
    throw calib::FatalBackendError(msg);
  throw std::runtime_error(msg);
}

void throw_cublas(cublasStatus_t e, const char* what, const char* file, int line)
{
  throw std::runtime_error(std::string(cublasGetStatusName(e)) + " in " + where(what, file, line));
}

} // namespace dbosim::kern

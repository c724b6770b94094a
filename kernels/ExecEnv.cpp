#include "kernels/ExecEnv.hpp"

namespace dbosim::kern {

ExecEnv::ExecEnv(CUcontext ctx, int sms, bool green) : ctx_(ctx), sms_(sms), green_(green)
{
  activate();
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&blas_));
  CUBLAS_CHECK(cublasSetStream(blas_, stream_));
  CUBLAS_CHECK(cublasLtCreate(&lt_));
  grow(64);
}

ExecEnv::~ExecEnv()
{
  cuCtxSetCurrent(ctx_);
  for (auto e : start_)
    cudaEventDestroy(e);
  for (auto e : end_)
    cudaEventDestroy(e);
  if (lt_)
    cublasLtDestroy(lt_);
  if (blas_)
    cublasDestroy(blas_);
  if (side_)
    cudaStreamDestroy(side_);
  if (stream_)
    cudaStreamDestroy(stream_);
}

void ExecEnv::activate() const { CU_CHECK(cuCtxSetCurrent(ctx_)); }

void ExecEnv::grow(int n)
{
  while (static_cast<int>(start_.size()) < n) {
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    start_.push_back(a);
    end_.push_back(b);
  }
}

cudaEvent_t ExecEnv::start_event(int i)
{
  if (i >= static_cast<int>(start_.size())) {
    activate();
    grow(i + 1);
  }
  return start_[static_cast<size_t>(i)];
}

cudaEvent_t ExecEnv::end_event(int i)
{
  start_event(i);
  return end_[static_cast<size_t>(i)];
}

Device::Device(int ordinal) : ordinal_(ordinal)
{
  CU_CHECK(cuInit(0));
  CUDA_CHECK(cudaSetDevice(ordinal_));
  CUDA_CHECK(cudaFree(nullptr)); // makes the primary context current
  CUDA_CHECK(cudaGetDeviceProperties(&props_, ordinal_));
  CU_CHECK(cuDeviceGet(&dev_, ordinal_));
  CU_CHECK(cuCtxGetCurrent(&primary_ctx_));
  primary_ = std::make_unique<ExecEnv>(primary_ctx_, props_.multiProcessorCount, false);
}

Device::~Device()
{
  for (auto& [sms, p] : partitions_) {
    p.compute.reset();
    p.rest.reset();
    for (auto g : p.owned)
      cuGreenCtxDestroy(g);
  }
  primary_.reset();
}

std::string Device::sm_resource_info() const
{
  CUdevResource all{};
  if (cuDeviceGetDevResource(dev_, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
    return "unavailable";
  return "smCount=" + std::to_string(all.sm.smCount) +
         " minSmPartitionSize=" + std::to_string(all.sm.minSmPartitionSize) +
         " smCoscheduledAlignment=" + std::to_string(all.sm.smCoscheduledAlignment);
}

Partition& Device::partition(int sms)
{
  auto it = partitions_.find(sms);
  if (it != partitions_.end())
    return it->second;
  CUdevResource all{};
  CU_CHECK(cuDeviceGetDevResource(dev_, &all, CU_DEV_RESOURCE_TYPE_SM));
  CUdevResource group{}, rem{};
  unsigned groups = 1;
  bool ignored    = false;
  CUresult r      = cuDevSmResourceSplitByCount(&group, &groups, &all, &rem, 0, static_cast<unsigned>(sms));
  if (r != CUDA_SUCCESS || groups != 1 || static_cast<int>(group.sm.smCount) != sms) {
    // the default split keeps SMs of one GPC together and rounds the count; ask for the exact count instead
    groups  = 1;
    ignored = true;
    CU_CHECK(cuDevSmResourceSplitByCount(&group, &groups, &all, &rem, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING,
                                         static_cast<unsigned>(sms)));
  }
  if (groups != 1)
    throw std::runtime_error("cuDevSmResourceSplitByCount gave no group of " + std::to_string(sms) + " SMs");
  Partition p;
  p.ignored_coscheduling = ignored;
  auto make              = [&](CUdevResource& res) {
    CUdevResourceDesc desc;
    CU_CHECK(cuDevResourceGenerateDesc(&desc, &res, 1));
    CUgreenCtx g;
    CU_CHECK(cuGreenCtxCreate(&g, desc, dev_, CU_GREEN_CTX_DEFAULT_STREAM));
    p.owned.push_back(g);
    CUcontext ctx;
    CU_CHECK(cuCtxFromGreenCtx(&ctx, g));
    return std::make_unique<ExecEnv>(ctx, static_cast<int>(res.sm.smCount), true);
  };
  p.compute = make(group);
  if (rem.sm.smCount > 0)
    p.rest = make(rem);
  primary_->activate();
  return partitions_.emplace(sms, std::move(p)).first->second;
}

ExecEnv& Device::env_for(int sms)
{
  if (sms >= sm_count())
    return *primary_;
  return *partition(sms).compute;
}

} // namespace dbosim::kern

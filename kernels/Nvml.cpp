#include "kernels/Nvml.hpp"

#include <dlfcn.h>

namespace dbosim::kern {
namespace {
// The few NVML entry points used here, with their C signatures (nvml.h): handles are opaque pointers.
using init_fn      = int (*)();
using handle_fn    = int (*)(unsigned, void**);
using clock_fn     = int (*)(void*, int, unsigned*);
using version_fn   = int (*)(char*, unsigned);
using power_fn     = int (*)(void*, unsigned*);
constexpr int kSm  = 1; // NVML_CLOCK_SM
constexpr int kMem = 2; // NVML_CLOCK_MEM

template <class F> F sym(void* lib, const char* name) { return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr; }

} // namespace

Nvml::Nvml()
{
  lib_        = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  auto init   = sym<init_fn>(lib_, "nvmlInit_v2");
  auto handle = sym<handle_fn>(lib_, "nvmlDeviceGetHandleByIndex_v2");
  ok_         = init && handle && init() == 0 && handle(0, &dev_) == 0;
}

int Nvml::sm_clock_mhz() const
{
  auto f     = sym<clock_fn>(lib_, "nvmlDeviceGetClockInfo");
  unsigned v = 0;
  return ok_ && f && f(dev_, kSm, &v) == 0 ? static_cast<int>(v) : -1;
}

int Nvml::mem_clock_mhz() const
{
  auto f     = sym<clock_fn>(lib_, "nvmlDeviceGetClockInfo");
  unsigned v = 0;
  return ok_ && f && f(dev_, kMem, &v) == 0 ? static_cast<int>(v) : -1;
}

int Nvml::max_sm_clock_mhz() const
{
  auto f     = sym<clock_fn>(lib_, "nvmlDeviceGetMaxClockInfo");
  unsigned v = 0;
  return ok_ && f && f(dev_, kSm, &v) == 0 ? static_cast<int>(v) : -1;
}

int Nvml::max_mem_clock_mhz() const
{
  auto f     = sym<clock_fn>(lib_, "nvmlDeviceGetMaxClockInfo");
  unsigned v = 0;
  return ok_ && f && f(dev_, kMem, &v) == 0 ? static_cast<int>(v) : -1;
}

std::string Nvml::driver_version() const
{
  auto f       = sym<version_fn>(lib_, "nvmlSystemGetDriverVersion");
  char buf[96] = {0};
  return ok_ && f && f(buf, sizeof buf) == 0 ? std::string(buf) : std::string("unknown");
}

double Nvml::power_w() const
{
  auto f     = sym<power_fn>(lib_, "nvmlDeviceGetPowerUsage");
  unsigned v = 0;
  return ok_ && f && f(dev_, &v) == 0 ? v / 1000.0 : -1.0;
}

} // namespace dbosim::kern

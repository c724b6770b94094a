#include "kernels/Nvml.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

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

NvmlSampler::NvmlSampler(int period_us, double keep_s)
    : period_us_(period_us), keep_ms_(1e3 * keep_s), thread_([this] { loop(); })
{
}

NvmlSampler::~NvmlSampler()
{
  stop_ = true;
  thread_.join();
}

double NvmlSampler::now_ms()
{
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void NvmlSampler::loop()
{
  if (!nvml_.ok())
    return;
  while (!stop_) {
    const Sample s{now_ms(), double(nvml_.sm_clock_mhz()), nvml_.power_w()};
    {
      std::lock_guard<std::mutex> g(mu_);
      samples_.push_back(s);
      while (!samples_.empty() && samples_.front().t_ms < s.t_ms - keep_ms_)
        samples_.pop_front();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(period_us_));
  }
}

std::vector<NvmlSampler::Sample> NvmlSampler::samples(double from_ms, double to_ms) const
{
  std::vector<Sample> out;
  std::lock_guard<std::mutex> g(mu_);
  for (const Sample& s : samples_)
    if (s.t_ms >= from_ms && s.t_ms <= to_ms)
      out.push_back(s);
  return out;
}

NvmlSampler::Window NvmlSampler::window(double from_ms, double to_ms) const
{
  std::vector<double> c, p;
  for (const Sample& s : samples(from_ms, to_ms)) {
    c.push_back(s.sm_mhz);
    p.push_back(s.power_w);
  }
  Window w;
  w.samples = static_cast<int>(c.size());
  if (c.empty())
    return w;
  std::sort(c.begin(), c.end());
  std::sort(p.begin(), p.end());
  w.clk_min = c.front();
  w.clk_med = c[c.size() / 2];
  w.clk_max = c.back();
  w.power_w = p[p.size() / 2];
  return w;
}

} // namespace dbosim::kern

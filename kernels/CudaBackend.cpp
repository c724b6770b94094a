#include "kernels/CudaBackend.hpp"

#include "kernels/Kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

namespace dbosim::kern {
namespace {
using calib::Measurement;
using calib::MeasureSpec;
using Params = std::map<std::string, double>;

int geti(const Params& p, const char* key)
{
  auto it = p.find(key);
  if (it == p.end())
    throw std::runtime_error(std::string("missing parameter ") + key);
  return static_cast<int>(it->second);
}

double host_us_since(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

std::string utc_now()
{
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

} // namespace

CudaBackend::CudaBackend(int device, std::string git_commit, size_t arena_bytes)
    : dev_(device), git_commit_(std::move(git_commit)), arena_bytes_(arena_bytes)
{
  dev_.primary().activate();
  CUDA_CHECK(cudaMalloc(&arena_, arena_bytes_));
  flush_bytes_ = std::max<size_t>(2 * static_cast<size_t>(dev_.props().l2CacheSize), 64u << 20);
  CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
  CUDA_CHECK(cudaMalloc(&ws_, ws_bytes_));
  CUDA_CHECK(cudaMalloc(&one_, sizeof(float)));
  const float one = 1.0f;
  CUDA_CHECK(cudaMemcpy(one_, &one, sizeof one, cudaMemcpyHostToDevice));
}

CudaBackend::~CudaBackend()
{
  dev_.primary().activate();
  cudaFree(one_);
  cudaFree(ws_);
  cudaFree(flush_);
  cudaFree(arena_);
}

char* CudaBackend::alloc(size_t bytes)
{
  size_t aligned = (bytes + 255) & ~size_t(255);
  if (used_ + aligned > arena_bytes_)
    throw std::runtime_error("needs more than the " + std::to_string(arena_bytes_ >> 30) + " GiB arena");
  char* p = arena_ + used_;
  used_ += aligned;
  return p;
}

std::map<std::string, std::string> CudaBackend::environment()
{
  const auto& pr = dev_.props();
  std::map<std::string, std::string> e;
  e["gpu_name"]           = pr.name;
  e["sm_count"]           = std::to_string(pr.multiProcessorCount);
  e["compute_capability"] = std::to_string(pr.major) + "." + std::to_string(pr.minor);
  e["l2_bytes"]           = std::to_string(pr.l2CacheSize);
  e["hbm_bytes"]          = std::to_string(pr.totalGlobalMem);
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  e["driver"]          = nvml_.driver_version();
  e["cuda_driver_api"] = std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10);
  e["cuda"]            = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
  int ma = 0, mi = 0, pa = 0;
  cublasGetProperty(MAJOR_VERSION, &ma);
  cublasGetProperty(MINOR_VERSION, &mi);
  cublasGetProperty(PATCH_LEVEL, &pa);
  e["cublas"]            = std::to_string(ma) + "." + std::to_string(mi) + "." + std::to_string(pa);
  e["cublaslt"]          = std::to_string(cublasLtGetVersion());
  e["nccl"]              = nccl_version();
  e["sm_clock_mhz"]      = std::to_string(nvml_.sm_clock_mhz());
  e["mem_clock_mhz"]     = std::to_string(nvml_.mem_clock_mhz());
  e["max_sm_clock_mhz"]  = std::to_string(nvml_.max_sm_clock_mhz());
  e["max_mem_clock_mhz"] = std::to_string(nvml_.max_mem_clock_mhz());
  e["power_w"]           = std::to_string(nvml_.power_w());
  e["date"]              = utc_now();
  e["git_commit"]        = git_commit_;
  e["sm_resource"]       = dev_.sm_resource_info();
  int count              = 0;
  cudaGetDeviceCount(&count);
  e["gpu_count"] = std::to_string(count);
  e["timing"] =
      "CUDA events around each repeat after 2 warm-up launches; L2 flushed (memset of " +
      std::to_string(flush_bytes_ >> 20) +
      " MiB) before each repeat; median of 5-50 repeats (sm_table points with rest_ms: the GPU idles that many "
      "ms before repeats for about 15 ms, median of 3-50; with settle_ms: that many ms of back-to-back "
      "launches first, then back-to-back repeats for 25 ms without a flush, median of 5-200)";
  return e;
}

/*** Timing ***/

CudaBackend::Timed CudaBackend::run_reps(ExecEnv& env, const Prepared& k, int reps, bool flush)
{
  env.activate();
  cudaStream_t s = env.stream();
  for (int i = 0; i < reps; ++i) {
    if (flush)
      CUDA_CHECK(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_, s));
    CUDA_CHECK(cudaEventRecord(env.start_event(i), s));
    k.op(env);
    CUDA_CHECK(cudaEventRecord(env.end_event(i), s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  Timed t;
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, env.start_event(i), env.end_event(i)));
    t.samples_us.push_back(1e3 * ms);
  }
  float loop_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&loop_ms, env.start_event(0), env.end_event(reps - 1)));
  t.loop_us = 1e3 * loop_ms;
  return t;
}

CudaBackend::Timed CudaBackend::time_op(ExecEnv& env, const Prepared& k, bool flush, int min_reps, int max_reps)
{
  env.activate();
  k.op(env); // warm-up: module load, cuBLAS kernel selection, clocks up
  k.op(env);
  CUDA_CHECK(cudaStreamSynchronize(env.stream()));
  Timed est            = run_reps(env, k, 1, flush);
  const double per_rep = est.samples_us[0] + (flush ? static_cast<double>(flush_bytes_) / 3e6 : 0.0);
  const int reps       = std::clamp(static_cast<int>(25e3 / std::max(per_rep, 1.0)), min_reps, max_reps);
  return run_reps(env, k, reps, flush);
}

CudaBackend::Timed CudaBackend::time_settled(ExecEnv& env, const Prepared& k, double settle_ms,
                                             NvmlSampler::Window& clock)
{
  env.activate();
  k.op(env); // warm-up: module load, cuBLAS kernel selection
  k.op(env);
  CUDA_CHECK(cudaStreamSynchronize(env.stream()));
  const double est  = std::max(run_reps(env, k, 1, false).samples_us[0], 1.0);
  const int settles = std::clamp(static_cast<int>(settle_ms * 1e3 / est), 1, 20000);
  for (int i = 0; i < settles; ++i) // queued right before the timed repeats: the GPU runs them all back to back
    k.op(env);
  const int reps = std::clamp(static_cast<int>(25e3 / est), 5, 200);
  Timed t        = run_reps(env, k, reps, false);
  const double b = NvmlSampler::now_ms();
  clock          = sampler_.window(b - t.loop_us / 1e3, b);
  return t;
}

CudaBackend::Timed CudaBackend::time_rested(ExecEnv& env, const Prepared& k, double rest_ms, NvmlSampler::Window& clock)
{
  env.activate();
  k.op(env); // warm-up: module load, cuBLAS kernel selection
  k.op(env);
  CUDA_CHECK(cudaStreamSynchronize(env.stream()));
  const double per_rep = run_reps(env, k, 1, true).samples_us[0] + static_cast<double>(flush_bytes_) / 3e6;
  const int reps       = std::clamp(static_cast<int>(15e3 / std::max(per_rep, 1.0)), 3, 50);
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(rest_ms)); // the GPU idles
  Timed t        = run_reps(env, k, reps, true);
  const double b = NvmlSampler::now_ms();
  clock          = sampler_.window(b - t.loop_us / 1e3, b);
  return t;
}

Measurement CudaBackend::measure_kernel(const std::string& family, const Params& p, ExecEnv& env)
{
  Prepared k                      = prepare(family, p, env);
  Timed t                         = time_op(env, k, true);
  const double b                  = NvmlSampler::now_ms();
  const NvmlSampler::Window clock = sampler_.window(b - t.loop_us / 1e3, b);
  Measurement m;
  calib::summarize_samples(m, t.samples_us);
  m.extra["sm_clock_mhz"] = nvml_.sm_clock_mhz();
  if (clock.samples > 0) { // the clock while the repeats (and their flushes) ran, sampled every 1 ms
    m.extra["sm_clock_min_mhz"] = clock.clk_min;
    m.extra["sm_clock_med_mhz"] = clock.clk_med;
    m.extra["sm_clock_max_mhz"] = clock.clk_max;
  }
  if (k.flops > 0)
    m.extra["tflops"] = k.flops / m.us / 1e6;
  if (k.bytes > 0)
    m.extra["gbps"] = k.bytes / m.us / 1e3;
  m.extra["retile"] = k.retile ? 1 : 0;
  m.info["impl"]    = k.info;
  return m;
}

/*** Host costs ***/

Measurement CudaBackend::host_cost(const std::string& what)
{
  ExecEnv& env = dev_.primary();
  env.activate();
  cudaStream_t s = env.stream();
  using clock    = std::chrono::steady_clock;
  std::vector<double> samples;
  constexpr int kBatch = 100;
  for (int w = 0; w < 20; ++w) // warm-up
    empty_kernel(s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  cudaEvent_t ev = env.start_event(0);
  if (what == "launch") {
    for (int r = 0; r < 30; ++r) {
      auto t0 = clock::now();
      for (int i = 0; i < kBatch; ++i)
        empty_kernel(s);
      samples.push_back(host_us_since(t0) / kBatch);
      CUDA_CHECK(cudaStreamSynchronize(s));
    }
  } else if (what == "event_record" || what == "stream_wait_event") {
    CUDA_CHECK(cudaEventRecord(ev, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    for (int r = 0; r < 30; ++r) {
      auto t0 = clock::now();
      for (int i = 0; i < kBatch; ++i) {
        if (what == "event_record")
          CUDA_CHECK(cudaEventRecord(ev, s));
        else
          CUDA_CHECK(cudaStreamWaitEvent(env.side_stream(), ev, 0));
      }
      samples.push_back(host_us_since(t0) / kBatch);
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  } else if (what == "stream_sync" || what == "launch_sync_roundtrip") {
    for (int r = 0; r < 300; ++r) {
      auto t0 = clock::now();
      if (what == "launch_sync_roundtrip")
        empty_kernel(s);
      CUDA_CHECK(cudaStreamSynchronize(s));
      samples.push_back(host_us_since(t0));
    }
  } else if (what == "graph_kernel") {
    // per-kernel cost inside a replay: (replay of 101 kernels - replay of 1) / 100, GPU time by events
    auto replay_us = [&](int kernels) {
      cudaGraph_t g;
      cudaGraphExec_t ge;
      CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < kernels; ++i)
        empty_kernel(s);
      CUDA_CHECK(cudaStreamEndCapture(s, &g));
      CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
      std::vector<double> v;
      for (int r = 0; r < 23; ++r) {
        CUDA_CHECK(cudaEventRecord(env.start_event(1), s));
        CUDA_CHECK(cudaGraphLaunch(ge, s));
        CUDA_CHECK(cudaEventRecord(env.end_event(1), s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, env.start_event(1), env.end_event(1)));
        if (r >= 3)
          v.push_back(1e3 * ms);
      }
      cudaGraphExecDestroy(ge);
      cudaGraphDestroy(g);
      std::sort(v.begin(), v.end());
      return v;
    };
    auto one = replay_us(1), many = replay_us(101);
    for (size_t i = 0; i < many.size(); ++i)
      samples.push_back((many[i] - one[i]) / 100.0);
  } else {
    throw std::runtime_error("unknown host cost " + what);
  }
  Measurement m;
  calib::summarize_samples(m, samples);
  m.info["impl"] = what == "graph_kernel" ? "GPU time by events" : "host steady_clock";
  return m;
}

/*** The comm-like copy kernel ***/

Measurement CudaBackend::copy_kernel(const Params& p)
{
  ExecEnv& env     = dev_.primary();
  const int ctas   = geti(p, "ctas");
  const size_t len = size_t(geti(p, "mib")) << 20;
  used_            = 0;
  char* src        = alloc(len);
  char* dst        = alloc(len);
  fill_bf16(src, len / 2, 7, env.stream());
  Prepared k;
  k.op    = [=](ExecEnv& e) { copy_ctas(dst, src, len, 1, ctas, 0, e.stream()); };
  Timed t = time_op(env, k, false, 5, 20);
  Measurement m;
  calib::summarize_samples(m, t.samples_us);
  m.extra["gbps"]         = double(len) / m.us / 1e3;       // payload bytes copied per second
  m.extra["gbps_rw"]      = 2.0 * double(len) / m.us / 1e3; // HBM traffic, read + write
  m.extra["sm_clock_mhz"] = nvml_.sm_clock_mhz();
  m.info["impl"]          = "SM-resident copy, 1024 threads per CTA, 16-byte accesses, one slab per CTA";
  return m;
}

/*** SM partitions ***/

Measurement CudaBackend::sm_scaling(const MeasureSpec& spec)
{
  Params kp     = spec.params;
  const int sms = geti(kp, "sms");
  kp.erase("sms");
  const double settle_ms = kp.count("settle_ms") ? kp.at("settle_ms") : 0.0;
  const double rest_ms   = kp.count("rest_ms") ? kp.at("rest_ms") : 0.0;
  kp.erase("settle_ms");
  kp.erase("rest_ms");
  ExecEnv& env = dev_.env_for(sms);
  Measurement m;
  if (settle_ms > 0 || rest_ms > 0) { // the per-shape SM tables' timings (validate/testbed/diag/README.md)
    Prepared k = prepare(spec.variant, kp, env);
    NvmlSampler::Window clock;
    Timed t = rest_ms > 0 ? time_rested(env, k, rest_ms, clock) : time_settled(env, k, settle_ms, clock);
    calib::summarize_samples(m, t.samples_us);
    m.extra["sm_clock_mhz"]     = clock.clk_med >= 0 ? clock.clk_med : nvml_.sm_clock_mhz();
    m.extra["sm_clock_min_mhz"] = clock.clk_min;
    m.extra["sm_clock_med_mhz"] = clock.clk_med;
    m.extra["sm_clock_max_mhz"] = clock.clk_max;
    m.extra["power_w"]          = clock.power_w;
    m.extra["clock_samples"]    = clock.samples;
    if (k.flops > 0)
      m.extra["tflops"] = k.flops / m.us / 1e6;
    if (k.bytes > 0)
      m.extra["gbps"] = k.bytes / m.us / 1e3;
    m.extra["retile"] = k.retile ? 1 : 0;
    m.info["impl"]    = k.info;
    m.info["timing"]  = rest_ms > 0 ? "rested: the GPU idle " + std::to_string(static_cast<int>(rest_ms)) +
                                         " ms, then repeats for about 15 ms, L2 flushed before each"
                                    : "settled: " + std::to_string(static_cast<int>(settle_ms)) +
                                         " ms of back-to-back launches, then back-to-back repeats for 25 ms, no L2 "
                                          "flush";
    m.info["timing"] += "; SM clock sampled every 1 ms over the timed repeats";
  } else {
    m = measure_kernel(spec.variant, kp, env);
  }
  m.extra["actual_sms"] = env.sms();
  m.extra["green"]      = env.green() ? 1 : 0;
  if (env.green())
    m.extra["ignored_coscheduling"] = dev_.partition(sms).ignored_coscheduling ? 1 : 0;
  dev_.primary().activate();
  return m;
}

Measurement CudaBackend::interference(const MeasureSpec& spec)
{
  Params kp              = spec.params;
  const bool partitioned = geti(kp, "partitioned") != 0;
  const int comm_ctas    = geti(kp, "comm_ctas");
  const int comm_smem    = kp.count("comm_smem_bytes") ? geti(kp, "comm_smem_bytes") : 0;
  kp.erase("partitioned");
  kp.erase("comm_ctas");
  kp.erase("comm_smem_bytes");
  ExecEnv* cenv        = &dev_.primary();
  ExecEnv* menv        = &dev_.primary();
  cudaStream_t mstream = dev_.primary().side_stream();
  if (partitioned) {
    Partition& part = dev_.partition(dev_.sm_count() - comm_ctas);
    if (!part.rest)
      throw std::runtime_error("no SMs left for the comm kernel");
    cenv    = part.compute.get();
    menv    = part.rest.get();
    mstream = menv->stream();
  }
  Prepared k = prepare(spec.variant, kp, *cenv);
  // comm buffers after the compute buffers (prepare resets the arena)
  const size_t len = size_t(256) << 20;
  char* src        = alloc(len);
  char* dst        = alloc(len);
  Timed alone      = time_op(*cenv, k, true);
  const int reps   = static_cast<int>(alone.samples_us.size());

  // the comm kernel alone, one pass, on its own SMs (or the shared GPU)
  cudaEvent_t c0 = menv->start_event(60), c1 = menv->end_event(60);
  menv->activate();
  copy_ctas(dst, src, len, 1, comm_ctas, comm_smem, mstream); // warm-up
  CUDA_CHECK(cudaEventRecord(c0, mstream));
  copy_ctas(dst, src, len, 1, comm_ctas, comm_smem, mstream);
  CUDA_CHECK(cudaEventRecord(c1, mstream));
  CUDA_CHECK(cudaStreamSynchronize(mstream));
  float pass_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&pass_ms, c0, c1));
  const int passes = static_cast<int>(std::ceil(2.5 * alone.loop_us / (1e3 * pass_ms))) + 1;

  // both at once: the comm kernel first, then the compute repeats beside it
  CUDA_CHECK(cudaEventRecord(c0, mstream));
  copy_ctas(dst, src, len, passes, comm_ctas, comm_smem, mstream);
  CUDA_CHECK(cudaEventRecord(c1, mstream));
  Timed with = run_reps(*cenv, k, reps, true);
  menv->activate();
  CUDA_CHECK(cudaStreamSynchronize(mstream));
  float comm_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&comm_ms, c0, c1));
  dev_.primary().activate();

  Measurement m;
  calib::summarize_samples(m, with.samples_us);
  Measurement a;
  calib::summarize_samples(a, alone.samples_us);
  m.extra["us_alone"]         = a.us;
  m.extra["slowdown"]         = m.us / a.us;
  m.extra["compute_sms"]      = cenv->sms();
  m.extra["comm_sms"]         = partitioned ? menv->sms() : dev_.sm_count();
  m.extra["comm_gbps_alone"]  = double(len) / pass_ms / 1e6;
  m.extra["comm_gbps_with"]   = double(len) * passes / comm_ms / 1e6;
  m.extra["overlap_ok"]       = 1e3 * comm_ms >= with.loop_us ? 1 : 0;
  m.extra["sm_clock_mhz"]     = nvml_.sm_clock_mhz();
  m.extra["comm_ctas_per_sm"] = copy_ctas_per_sm(comm_smem);
  m.info["impl"]              = std::string(partitioned ? "green contexts: compute and comm on disjoint SMs"
                                                        : "one context, two streams: comm CTAs share the SMs") +
                   "; comm kernel = copy with " + std::to_string(comm_ctas) + " CTAs, " + std::to_string(passes) +
                   " passes of 256 MiB, " + std::to_string(comm_smem) + " B dynamic shared memory per CTA";
  return m;
}

/*** Dispatch ***/

Measurement CudaBackend::measure(const MeasureSpec& spec)
{
  dev_.primary().activate();
  Measurement m;
  if (spec.family == "env")
    throw std::runtime_error("env is not a kernel");
  if (spec.family == "host")
    m = host_cost(spec.variant);
  else if (spec.family == "copy_kernel")
    m = copy_kernel(spec.params);
  else if (spec.family == "sm_scaling" || spec.family == "sm_table") // the same path; sm_table: per-shape tables
    m = sm_scaling(spec);
  else if (spec.family == "interference")
    m = interference(spec);
  else if (spec.family == "nccl")
    m = nccl_measure(spec);
  else
    m = measure_kernel(spec.family, spec.params, dev_.primary());
  CUDA_CHECK(cudaDeviceSynchronize());
  m.spec = spec;
  return m;
}

} // namespace dbosim::kern

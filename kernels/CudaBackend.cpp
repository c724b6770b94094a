#include "kernels/CudaBackend.hpp"

#include "calibrate/SuitePlan.hpp"
#include "kernels/Gemm.hpp"
#include "kernels/Kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

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

constexpr int kMlaLatent = 512; // kv_lora_rank: the latent that is both K (with the rope part) and V
constexpr int kMlaRope   = 64;  // qk_rope_head_dim

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
  e["timing"]    = "CUDA events around each repeat after 2 warm-up launches; L2 flushed (memset of " +
                std::to_string(flush_bytes_ >> 20) + " MiB) before each repeat; median of 5-50 repeats";
  return e;
}

/*** Kernels ***/

CudaBackend::Prepared CudaBackend::prepare(const std::string& family, const Params& p, ExecEnv& env)
{
  const int sm_target = env.green() ? env.sms() : 0;
  cudaStream_t s      = env.stream();
  used_               = 0;
  Prepared k;
  if (family == "gemm_bf16" || family == "gemm_fp8" || family == "grouped_gemm_bf16" || family == "grouped_gemm_fp8") {
    const bool fp8   = family == "gemm_fp8" || family == "grouped_gemm_fp8";
    const int tokens = geti(p, "tokens"), n = geti(p, "n"), kk = geti(p, "k");
    const int batch  = family.rfind("grouped", 0) == 0 ? geti(p, "experts") : 1;
    const size_t elt = fp8 ? 1 : 2;
    char* x          = alloc(size_t(batch) * tokens * kk * elt);
    char* w          = alloc(size_t(batch) * n * kk * elt);
    char* y          = alloc(size_t(batch) * tokens * n * 2);
    if (fp8) {
      fill_fp8(x, size_t(batch) * tokens * kk, 1, s);
      fill_fp8(w, size_t(batch) * n * kk, 2, s);
    } else {
      fill_bf16(x, size_t(batch) * tokens * kk, 1, s);
      fill_bf16(w, size_t(batch) * n * kk, 2, s);
    }
    auto g = std::make_shared<LtGemm>(env.lt(), fp8, tokens, n, kk, batch, sm_target, ws_, ws_bytes_, one_);
    g->select(x, w, y, s);
    k.op     = [g, x, w, y](ExecEnv& e) { g->run(x, w, y, e.stream()); };
    k.flops  = 2.0 * batch * tokens * double(n) * kk;
    k.bytes  = double(batch) * (double(tokens) * kk * elt + double(n) * kk * elt + double(tokens) * n * 2);
    k.retile = true;
    k.info =
        "cuBLASLt " + std::string(batch > 1 ? "strided-batched (one batch entry per expert) " : "") + g->algo_info();
  } else if (family == "grouped_gemm_bf16_skewed" || family == "grouped_gemm_fp8_skewed") {
    // unequal experts: one cuBLASLt GEMM per expert, back to back on the stream (a plan per distinct count)
    const bool fp8    = family == "grouped_gemm_fp8_skewed";
    const int experts = geti(p, "experts"), tpe = geti(p, "tokens"), n = geti(p, "n"), kk = geti(p, "k");
    const std::vector<int> tokens = calib::skewed_tokens(experts, tpe);
    const size_t elt              = fp8 ? 1 : 2;
    const size_t total            = size_t(experts) * tpe;
    char* x                       = alloc(total * kk * elt);
    char* w                       = alloc(size_t(experts) * n * kk * elt);
    char* y                       = alloc(total * n * 2);
    if (fp8) {
      fill_fp8(x, total * kk, 1, s);
      fill_fp8(w, size_t(experts) * n * kk, 2, s);
    } else {
      fill_bf16(x, total * kk, 1, s);
      fill_bf16(w, size_t(experts) * n * kk, 2, s);
    }
    std::map<int, std::shared_ptr<LtGemm>> plans;
    struct Call {
      std::shared_ptr<LtGemm> g;
      const char *x, *w;
      char* y;
    };
    std::vector<Call> calls;
    size_t xo = 0, yo = 0;
    for (int e = 0; e < experts; ++e) {
      const int t = tokens[size_t(e)];
      if (t > 0) {
        auto& g = plans[t];
        if (!g) {
          g = std::make_shared<LtGemm>(env.lt(), fp8, t, n, kk, 1, sm_target, ws_, ws_bytes_, one_);
          g->select(x + xo, w + size_t(e) * n * kk * elt, y + yo, s);
        }
        calls.push_back({g, x + xo, w + size_t(e) * n * kk * elt, y + yo});
      }
      xo += size_t(t) * kk * elt;
      yo += size_t(t) * n * 2;
    }
    k.op = [calls](ExecEnv& e) {
      for (const auto& c : calls)
        c.g->run(c.x, c.w, c.y, e.stream());
    };
    k.flops  = 2.0 * double(total) * n * kk;
    k.bytes  = double(experts) * n * kk * elt + double(total) * (kk * elt + n * 2);
    k.retile = true;
    k.info   = "cuBLASLt, one GEMM per expert (Zipf tokens, max " + std::to_string(tokens[0]) + ")";
  } else if (family == "grouped_gemm_bf16_api") {
    const int experts = geti(p, "experts"), tpe = geti(p, "tokens"), n = geti(p, "n"), kk = geti(p, "k");
    std::vector<int> tokens(size_t(experts), tpe);
    const size_t total = size_t(experts) * tpe;
    char* x            = alloc(total * kk * 2);
    char* w            = alloc(size_t(experts) * n * kk * 2);
    char* y            = alloc(total * n * 2);
    void** ptrs        = reinterpret_cast<void**>(alloc(3 * size_t(experts) * sizeof(void*)));
    fill_bf16(x, total * kk, 1, s);
    fill_bf16(w, size_t(experts) * n * kk, 2, s);
    auto g = std::make_shared<GroupedGemm>(tokens, n, kk, x, w, y, ptrs, s);
    CUBLAS_CHECK(cublasSetSmCountTarget(env.blas(), sm_target));
    k.op     = [g](ExecEnv& e) { g->run(e.blas()); };
    k.flops  = 2.0 * double(total) * n * kk;
    k.bytes  = double(experts) * n * kk * 2 + double(total) * (kk + n) * 2;
    k.retile = true;
    k.info   = "cublasGemmGroupedBatchedEx, balanced";
  } else if (family == "mla_decode") {
    const int ctx = geti(p, "context"), heads = geti(p, "heads"), batch = geti(p, "tokens");
    const int dk = kMlaLatent + kMlaRope;
    char* kv     = alloc(size_t(batch) * ctx * dk * 2);
    char* q      = alloc(size_t(batch) * heads * dk * 2);
    char* sc     = alloc(size_t(batch) * heads * ctx * 2);
    char* o      = alloc(size_t(batch) * heads * kMlaLatent * 2);
    fill_bf16(kv, size_t(batch) * ctx * dk, 1, s);
    fill_bf16(q, size_t(batch) * heads * dk, 2, s);
    CUBLAS_CHECK(cublasSetSmCountTarget(env.blas(), sm_target));
    const float scale = 1.0f / std::sqrt(192.0f); // qk_nope + qk_rope of the un-absorbed head
    k.op              = [=](ExecEnv& e) {
      // scores[b][h][t] = q[b][h] . kv[b][t] ; column-major S^T(ctx x H) = KV (op T) x Q
      bf16_strided_batched(e.blas(), true, ctx, heads, dk, 1.0f, kv, dk, (long long)ctx * dk, q, dk,
                                        (long long)heads * dk, sc, ctx, (long long)heads * ctx, batch);
      softmax_rows(sc, long(batch) * heads, ctx, scale, 0, e.stream());
      // out[b][h] = P[b][h] . V[b] with V = the first 512 columns of each KV row
      bf16_strided_batched(e.blas(), false, kMlaLatent, heads, ctx, 1.0f, kv, dk, (long long)ctx * dk, sc, ctx,
                                        (long long)heads * ctx, o, kMlaLatent, (long long)heads * kMlaLatent, batch);
    };
    k.flops  = 2.0 * batch * heads * double(ctx) * (dk + kMlaLatent);
    k.bytes  = double(batch) * ctx * dk * 2;
    k.retile = true;
    k.info   = "absorbed MLA decode: cuBLAS strided-batched QK^T, softmax kernel, PV (unfused, contiguous KV per "
               "request)";
  } else if (family == "attention_prefill") {
    const int heads = geti(p, "heads"), d = geti(p, "head_dim"), t = geti(p, "tokens");
    const int dv         = d == 192 ? 128 : d; // MLA prefill: qk 192 (128 nope + 64 rope), v 128
    const size_t s_bytes = size_t(t) * t * 2;
    const int chunk      = static_cast<int>(std::max<size_t>(1, std::min<size_t>(heads, (size_t(4) << 30) / s_bytes)));
    char* q              = alloc(size_t(heads) * t * d * 2);
    char* kk             = alloc(size_t(heads) * t * d * 2);
    char* v              = alloc(size_t(heads) * t * dv * 2);
    char* o              = alloc(size_t(heads) * t * dv * 2);
    char* sc             = alloc(size_t(chunk) * s_bytes);
    fill_bf16(q, size_t(heads) * t * d, 1, s);
    fill_bf16(kk, size_t(heads) * t * d, 2, s);
    fill_bf16(v, size_t(heads) * t * dv, 3, s);
    CUBLAS_CHECK(cublasSetSmCountTarget(env.blas(), sm_target));
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    k.op              = [=](ExecEnv& e) {
      for (int h0 = 0; h0 < heads; h0 += chunk) {
        const int hc   = std::min(chunk, heads - h0);
        const char* qh = q + size_t(h0) * t * d * 2;
        const char* kh = kk + size_t(h0) * t * d * 2;
        const char* vh = v + size_t(h0) * t * dv * 2;
        char* oh       = o + size_t(h0) * t * dv * 2;
        bf16_strided_batched(e.blas(), true, t, t, d, 1.0f, kh, d, (long long)t * d, qh, d, (long long)t * d, sc, t,
                                          (long long)t * t, hc);
        softmax_rows(sc, long(hc) * t, t, scale, t, e.stream());
        bf16_strided_batched(e.blas(), false, dv, t, t, 1.0f, vh, dv, (long long)t * dv, sc, t, (long long)t * t, oh,
                                          dv, (long long)t * dv, hc);
      }
    };
    k.flops  = double(heads) * t * double(t) * (d + dv); // causal: half of 2 T^2 (d + dv)
    k.bytes  = double(heads) * t * (2.0 * d + 2.0 * dv) * 2;
    k.retile = true;
    k.info   = "causal prefill: cuBLAS strided-batched QK^T, causal softmax kernel, PV (unfused; computes the full "
               "T x T scores), " +
             std::to_string(chunk) + " heads per chunk";
  } else if (family == "rmsnorm") {
    const int h = geti(p, "hidden"), t = geti(p, "tokens");
    char* x = alloc(size_t(t) * h * 2);
    char* w = alloc(size_t(h) * 2);
    char* y = alloc(size_t(t) * h * 2);
    fill_bf16(x, size_t(t) * h, 1, s);
    fill_bf16(w, size_t(h), 2, s);
    k.op    = [=](ExecEnv& e) { rmsnorm(y, x, w, t, h, e.stream()); };
    k.bytes = 2.0 * t * h * 2;
    k.info  = "one CTA per token, 16-byte accesses";
  } else if (family == "silu_mul") {
    const int h = geti(p, "hidden"), t = geti(p, "tokens");
    char* x        = alloc(size_t(t) * 2 * h * 2);
    char* y        = alloc(size_t(t) * h * 2);
    const int grid = 4 * dev_.sm_count();
    fill_bf16(x, size_t(t) * 2 * h, 1, s);
    k.op    = [=](ExecEnv& e) { silu_mul(y, x, t, h, grid, e.stream()); };
    k.bytes = 3.0 * t * h * 2;
    k.info  = "grid-stride, fixed grid of " + std::to_string(grid) + " CTAs, 16-byte accesses";
  } else {
    throw std::runtime_error("unknown kernel family " + family);
  }
  return k;
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

Measurement CudaBackend::measure_kernel(const std::string& family, const Params& p, ExecEnv& env)
{
  Prepared k = prepare(family, p, env);
  Timed t    = time_op(env, k, true);
  Measurement m;
  calib::summarize_samples(m, t.samples_us);
  m.extra["sm_clock_mhz"] = nvml_.sm_clock_mhz();
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
  k.op    = [=](ExecEnv& e) { copy_ctas(dst, src, len, 1, ctas, e.stream()); };
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
  ExecEnv& env          = dev_.env_for(sms);
  Measurement m         = measure_kernel(spec.variant, kp, env);
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
  kp.erase("partitioned");
  kp.erase("comm_ctas");
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
  copy_ctas(dst, src, len, 1, comm_ctas, mstream); // warm-up
  CUDA_CHECK(cudaEventRecord(c0, mstream));
  copy_ctas(dst, src, len, 1, comm_ctas, mstream);
  CUDA_CHECK(cudaEventRecord(c1, mstream));
  CUDA_CHECK(cudaStreamSynchronize(mstream));
  float pass_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&pass_ms, c0, c1));
  const int passes = static_cast<int>(std::ceil(2.5 * alone.loop_us / (1e3 * pass_ms))) + 1;

  // both at once: the comm kernel first, then the compute repeats beside it
  CUDA_CHECK(cudaEventRecord(c0, mstream));
  copy_ctas(dst, src, len, passes, comm_ctas, mstream);
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
  m.extra["us_alone"]        = a.us;
  m.extra["slowdown"]        = m.us / a.us;
  m.extra["compute_sms"]     = cenv->sms();
  m.extra["comm_sms"]        = partitioned ? menv->sms() : dev_.sm_count();
  m.extra["comm_gbps_alone"] = double(len) / pass_ms / 1e6;
  m.extra["comm_gbps_with"]  = double(len) * passes / comm_ms / 1e6;
  m.extra["overlap_ok"]      = 1e3 * comm_ms >= with.loop_us ? 1 : 0;
  m.extra["sm_clock_mhz"]    = nvml_.sm_clock_mhz();
  m.info["impl"]             = std::string(partitioned ? "green contexts: compute and comm on disjoint SMs"
                                                       : "one context, two streams: comm CTAs share the SMs") +
                   "; comm kernel = copy with " + std::to_string(comm_ctas) + " CTAs, " + std::to_string(passes) +
                   " passes of 256 MiB";
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
  else if (spec.family == "sm_scaling")
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

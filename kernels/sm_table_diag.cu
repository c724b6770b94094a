/* dbosim-smtable-diag — why the per-shape SM tables (`sm_table`, dense GEMMs on green contexts of 112 and 100 SMs)
 * disagree with the same GEMMs inside the overlap testbed's green-context runs (validate/testbed/diag/README.md).
 *
 *   dbosim-smtable-diag --out FILE.jsonl [--quick]
 *
 * Writes one JSON object per line:
 *  - "partition": for each requested SM count, what cuDevSmResourceSplitByCount gives without flags (the default
 *    split rounds to the device's granularity), the SM count of the green context that the engine's code
 *    (kernels/ExecEnv.cpp) creates (cuGreenCtxGetDevResource) and the distinct SM ids (%smid) that a kernel of many
 *    CTAs launched into it ran on;
 *  - "gemm": the testbed's four BF16 GEMM shapes (validate/testbed/shapes.yaml) at the testbed's token counts on 132
 *    SMs and on the partitions, timed in several ways (mode): `calib` exactly as dbosim-calibrate-run times a point
 *    before this change (2 warm-up launches, an L2 flush before each repeat, events around each repeat, repeats for
 *    25 ms), `noflush` the same without the flush, `isolated` a synchronize around each repeat, `settled` back-to-back
 *    repeats after `settle_ms` of the same GEMM (clocks and L2 in the state of a running pipeline), `settled_notarget`
 *    the same with cuBLASLt not told the SM count, `settled_comm` the same with the copy kernel of the testbed
 * (DeepEP's shared memory per CTA) running on the remaining SMs all the while; each with the NVML SM clock (min,
 * median, max) and power sampled every millisecond while it ran;
 *  - "trace": a 600 ms back-to-back run of one GEMM with every repeat's duration and the clock samples (how fast the
 *    clock settles).
 * `--clock-log FILE.csv SECONDS` only samples the SM clock and power every millisecond for SECONDS (or until
 * FILE.csv.stop exists) beside another program (the testbed) and writes them as CSV.
 * Needs CUDA, cuBLASLt and NVML (loaded at run time). */
#include "kernels/ExecEnv.hpp"
#include "kernels/Gemm.hpp"
#include "kernels/Kernels.hpp"
#include "kernels/Nvml.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace dbosim::kern;
double now_ms() { return NvmlSampler::now_ms(); }

std::string samples_json(const NvmlSampler& smp, double a_ms, double b_ms)
{
  std::string t = "[", m = "[", w = "[";
  bool first = true;
  for (const auto& s : smp.samples(a_ms, b_ms)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.2f", first ? "" : ",", s.t_ms - a_ms);
    t += buf;
    std::snprintf(buf, sizeof buf, "%s%.0f", first ? "" : ",", s.sm_mhz);
    m += buf;
    std::snprintf(buf, sizeof buf, "%s%.1f", first ? "" : ",", s.power_w);
    w += buf;
    first = false;
  }
  return "\"sample_ms\": " + t + "], \"sample_mhz\": " + m + "], \"sample_w\": " + w + "]";
}

__global__ void smid_kernel(unsigned* seen)
{
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while (t - t0 < 20000ull); // 20 us: the CTAs spread over every SM the context may use
  if (threadIdx.x == 0 && id < 1024)
    seen[id] = 1;
}

struct Shape {
  const char* name;
  int n, k;
};

struct Stats {
  double us = 0, p10 = 0, p90 = 0;
  int reps = 0;
};

Stats stats_of(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  Stats s;
  s.reps = static_cast<int>(v.size());
  if (v.empty())
    return s;
  s.us  = v[v.size() / 2];
  s.p10 = v[v.size() / 10];
  s.p90 = v[(v.size() * 9) / 10];
  return s;
}

class Diag {
public:
  Diag(Device& dev, FILE* out, bool quick) : dev_(dev), out_(out), quick_(quick)
  {
    dev_.primary().activate();
    flush_bytes_ = std::max<size_t>(2 * size_t(dev_.props().l2CacheSize), 64u << 20);
    CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
    CUDA_CHECK(cudaMalloc(&ws_, ws_bytes_));
    CUDA_CHECK(cudaMalloc(&one_, sizeof(float)));
    const float one = 1.0f;
    CUDA_CHECK(cudaMemcpy(one_, &one, sizeof one, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&x_, size_t(8192) * 16384 * 2));
    CUDA_CHECK(cudaMalloc(&w_, size_t(16384) * 7168 * 2));
    CUDA_CHECK(cudaMalloc(&y_, size_t(8192) * 7168 * 2));
    fill_bf16(x_, size_t(8192) * 16384, 1, nullptr);
    fill_bf16(w_, size_t(16384) * 7168, 2, nullptr);
    CUDA_CHECK(cudaMalloc(&src_, copy_bytes_));
    CUDA_CHECK(cudaMalloc(&dst_, copy_bytes_));
    CUDA_CHECK(cudaMemset(src_, 0, copy_bytes_));
    CUDA_CHECK(cudaMalloc(&seen_, 1024 * sizeof(unsigned)));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~Diag()
  {
    dev_.primary().activate();
    cudaDeviceSynchronize();
    for (void* p : {flush_, ws_, static_cast<void*>(one_), x_, w_, y_, src_, dst_, static_cast<void*>(seen_)})
      cudaFree(p);
  }

  void partitions(const std::vector<int>& sms_list)
  {
    CUdevResource all{};
    CU_CHECK(cuDeviceGetDevResource(dev_.cu_device(), &all, CU_DEV_RESOURCE_TYPE_SM));
    for (int sms : sms_list) {
      CUdevResource group{}, rem{};
      unsigned groups       = 1;
      CUresult r            = cuDevSmResourceSplitByCount(&group, &groups, &all, &rem, 0, static_cast<unsigned>(sms));
      const int default_sms = r == CUDA_SUCCESS && groups == 1 ? int(group.sm.smCount) : -1;
      const int default_rem = r == CUDA_SUCCESS && groups == 1 ? int(rem.sm.smCount) : -1;
      Partition& p          = dev_.partition(sms);
      CUdevResource got{};
      CU_CHECK(cuGreenCtxGetDevResource(p.owned[0], &got, CU_DEV_RESOURCE_TYPE_SM));
      int rest_sms = 0;
      if (p.owned.size() > 1) {
        CUdevResource rr{};
        CU_CHECK(cuGreenCtxGetDevResource(p.owned[1], &rr, CU_DEV_RESOURCE_TYPE_SM));
        rest_sms = int(rr.sm.smCount);
      }
      const auto ids  = smids(*p.compute);
      const auto rids = p.rest ? smids(*p.rest) : std::set<unsigned>{};
      std::set<unsigned> both;
      for (unsigned i : ids)
        if (rids.count(i))
          both.insert(i);
      std::fprintf(out_,
                   "{\"what\": \"partition\", \"sms_requested\": %d, \"default_split_sms\": %d, "
                   "\"default_split_remaining\": %d, \"ignored_coscheduling\": %d, \"green_ctx_sms\": %d, "
                   "\"exec_env_sms\": %d, \"distinct_smids\": %zu, \"rest_green_ctx_sms\": %d, "
                   "\"rest_distinct_smids\": %zu, \"smids_in_both\": %zu, \"device\": \"%s\"}\n",
                   sms, default_sms, default_rem, p.ignored_coscheduling ? 1 : 0, int(got.sm.smCount), p.compute->sms(),
                   ids.size(), rest_sms, rids.size(), both.size(), dev_.sm_resource_info().c_str());
      std::fflush(out_);
    }
    const auto all_ids = smids(dev_.primary());
    std::fprintf(out_, "{\"what\": \"partition\", \"sms_requested\": %d, \"primary_distinct_smids\": %zu}\n",
                 dev_.sm_count(), all_ids.size());
    std::fflush(out_);
  }

  struct Point {
    Shape shape;
    int tokens, sms;
  };

  /** All modes of one (shape, tokens) at 132 SMs and each partition, mode by mode (132 first, as the calibration). */
  void group(const Shape& sh, int tokens, const std::vector<int>& sms_list)
  {
    for (const char* mode : {"calib", "noflush", "isolated", "settled", "settled_notarget", "settled_comm"})
      for (int sms : sms_list) {
        if (std::string(mode) == "settled_comm" && sms >= dev_.sm_count())
          continue;
        measure({sh, tokens, sms}, mode);
      }
  }

  void trace(const Shape& sh, int tokens, int sms, bool comm, double ms)
  {
    ExecEnv& env = dev_.env_for(sms);
    auto g       = make_gemm(env, sh, tokens, true);
    env.activate();
    const int reps = 2000;
    std::vector<cudaEvent_t> ev(reps + 1);
    for (auto& e : ev)
      CUDA_CHECK(cudaEventCreate(&e));
    double est    = once(env, *g);
    int n         = std::min(reps, std::max(10, int(ms * 1e3 / est)));
    ExecEnv* rest = sms < dev_.sm_count() ? dev_.partition(sms).rest.get() : nullptr;
    if (comm && rest)
      start_comm(*rest, dev_.sm_count() - sms, ms * 1.2);
    env.activate();
    CUDA_CHECK(cudaStreamSynchronize(env.stream()));
    const double a = now_ms();
    CUDA_CHECK(cudaEventRecord(ev[0], env.stream()));
    for (int i = 0; i < n; ++i) {
      g->run(x_, w_, y_, env.stream());
      CUDA_CHECK(cudaEventRecord(ev[i + 1], env.stream()));
    }
    CUDA_CHECK(cudaStreamSynchronize(env.stream()));
    const double b   = now_ms();
    std::string durs = "[", starts = "[";
    for (int i = 0; i < n; ++i) {
      float d = 0, s = 0;
      CUDA_CHECK(cudaEventElapsedTime(&d, ev[i], ev[i + 1]));
      CUDA_CHECK(cudaEventElapsedTime(&s, ev[0], ev[i]));
      char buf[48];
      std::snprintf(buf, sizeof buf, "%s%.2f", i ? "," : "", 1e3 * d);
      durs += buf;
      std::snprintf(buf, sizeof buf, "%s%.3f", i ? "," : "", double(s));
      starts += buf;
    }
    for (auto e : ev)
      cudaEventDestroy(e);
    if (comm && rest)
      finish_comm(*rest);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::fprintf(out_,
                 "{\"what\": \"trace\", \"shape\": \"%s\", \"n\": %d, \"k\": %d, \"tokens\": %d, \"sms\": %d, "
                 "\"comm_beside\": %d, \"host_window_ms\": %.2f, \"rep_start_ms\": %s], \"rep_us\": %s], %s}\n",
                 sh.name, sh.n, sh.k, tokens, sms, comm ? 1 : 0, b - a, starts.c_str(), durs.c_str(),
                 samples_json(sampler_, a, b + 2).c_str());
    std::fflush(out_);
    dev_.primary().activate();
  }

private:
  std::unique_ptr<LtGemm> make_gemm(ExecEnv& env, const Shape& sh, int tokens, bool target)
  {
    env.activate();
    auto g = std::make_unique<LtGemm>(env.lt(), false, tokens, sh.n, sh.k, 1, target && env.green() ? env.sms() : 0,
                                      ws_, ws_bytes_, one_);
    g->select(x_, w_, y_, env.stream());
    return g;
  }

  double once(ExecEnv& env, const LtGemm& g)
  {
    env.activate();
    cudaEvent_t a = env.start_event(0), b = env.end_event(0);
    g.run(x_, w_, y_, env.stream());
    CUDA_CHECK(cudaEventRecord(a, env.stream()));
    g.run(x_, w_, y_, env.stream());
    CUDA_CHECK(cudaEventRecord(b, env.stream()));
    CUDA_CHECK(cudaStreamSynchronize(env.stream()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    return 1e3 * ms;
  }

  std::set<unsigned> smids(ExecEnv& env)
  {
    env.activate();
    CUDA_CHECK(cudaMemsetAsync(seen_, 0, 1024 * sizeof(unsigned), env.stream()));
    smid_kernel<<<4 * dev_.sm_count(), 128, 0, env.stream()>>>(seen_);
    LAUNCH_CHECK();
    std::vector<unsigned> h(1024);
    CUDA_CHECK(cudaMemcpyAsync(h.data(), seen_, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost, env.stream()));
    CUDA_CHECK(cudaStreamSynchronize(env.stream()));
    std::set<unsigned> ids;
    for (unsigned i = 0; i < h.size(); ++i)
      if (h[i])
        ids.insert(i);
    dev_.primary().activate();
    return ids;
  }

  /** The testbed's comm kernel on the remaining SMs for about `ms` milliseconds (passes over 256 MiB). */
  void start_comm(ExecEnv& rest, int ctas, double ms)
  {
    rest.activate();
    cudaEvent_t a = rest.start_event(40), b = rest.end_event(40);
    CUDA_CHECK(cudaEventRecord(a, rest.stream()));
    copy_ctas(dst_, src_, copy_bytes_, 1, ctas, kDeepEpSmem, rest.stream());
    CUDA_CHECK(cudaEventRecord(b, rest.stream()));
    CUDA_CHECK(cudaStreamSynchronize(rest.stream()));
    float pass = 0;
    CUDA_CHECK(cudaEventElapsedTime(&pass, a, b));
    const int passes = std::max(1, int(ms / std::max(pass, 0.01f)) + 1);
    copy_ctas(dst_, src_, copy_bytes_, passes, ctas, kDeepEpSmem, rest.stream());
    comm_pass_ms_ = pass;
  }
  void finish_comm(ExecEnv& rest)
  {
    rest.activate();
    CUDA_CHECK(cudaStreamSynchronize(rest.stream()));
  }

  void measure(const Point& pt, const std::string& mode)
  {
    ExecEnv& env      = dev_.env_for(pt.sms);
    const bool target = mode != "settled_notarget";
    auto g            = make_gemm(env, pt.shape, pt.tokens, target);
    cudaStream_t s    = env.stream();
    env.activate();
    const bool flush   = mode == "calib";
    const bool settled = mode.rfind("settled", 0) == 0;
    const bool comm    = mode == "settled_comm";
    g->run(x_, w_, y_, s); // warm-up, as dbosim-calibrate-run
    g->run(x_, w_, y_, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    const double est       = once(env, *g);
    const double per_rep   = est + (flush ? double(flush_bytes_) / 3e6 : 0.0);
    const double window    = quick_ ? 15e3 : 25e3;
    const int reps         = std::clamp(int(window / std::max(per_rep, 1.0)), 5, settled ? 200 : 50);
    const double settle_ms = settled ? (quick_ ? 60.0 : settle_ms_) : 0.0;
    ExecEnv* rest          = pt.sms < dev_.sm_count() ? dev_.partition(pt.sms).rest.get() : nullptr;
    if (comm)
      start_comm(*rest, dev_.sm_count() - pt.sms, settle_ms + window / 1e3 * 1.5 + 20);
    env.activate();
    const double a = now_ms();
    if (settled) {
      const int n = std::clamp(int(settle_ms * 1e3 / std::max(est, 1.0)), 1, 20000);
      for (int i = 0; i < n; ++i)
        g->run(x_, w_, y_, s);
    }
    std::vector<double> samples;
    double busy_us = 0;
    for (int i = 0; i < reps; ++i) {
      if (flush)
        CUDA_CHECK(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_, s));
      if (mode == "isolated")
        CUDA_CHECK(cudaStreamSynchronize(s));
      CUDA_CHECK(cudaEventRecord(env.start_event(i), s));
      g->run(x_, w_, y_, s);
      CUDA_CHECK(cudaEventRecord(env.end_event(i), s));
      if (mode == "isolated")
        CUDA_CHECK(cudaStreamSynchronize(s));
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    const double b = now_ms();
    for (int i = 0; i < reps; ++i) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, env.start_event(i), env.end_event(i)));
      samples.push_back(1e3 * ms);
    }
    float loop = 0;
    CUDA_CHECK(cudaEventElapsedTime(&loop, env.start_event(0), env.end_event(reps - 1)));
    busy_us = 1e3 * loop;
    if (comm)
      finish_comm(*rest);
    const Stats st              = stats_of(samples);
    const NvmlSampler::Window w = sampler_.window(b - busy_us / 1e3, b);
    std::fprintf(out_,
                 "{\"what\": \"gemm\", \"shape\": \"%s\", \"n\": %d, \"k\": %d, \"tokens\": %d, \"sms\": %d, "
                 "\"env_sms\": %d, \"mode\": \"%s\", \"us\": %.2f, \"us_p10\": %.2f, \"us_p90\": %.2f, \"reps\": %d, "
                 "\"settle_ms\": %.0f, \"timed_window_ms\": %.2f, \"host_ms\": %.1f, \"clk_min\": %.0f, "
                 "\"clk_med\": %.0f, \"clk_max\": %.0f, \"power_w\": %.1f, \"clock_samples\": %d, "
                 "\"comm_pass_ms\": %.3f, \"algo\": \"%s\"}\n",
                 pt.shape.name, pt.shape.n, pt.shape.k, pt.tokens, pt.sms, env.sms(), mode.c_str(), st.us, st.p10,
                 st.p90, st.reps, settle_ms, busy_us / 1e3, b - a, w.clk_min, w.clk_med, w.clk_max, w.power_w,
                 w.samples, comm ? comm_pass_ms_ : 0.0, g->algo_info().c_str());
    std::fflush(out_);
    dev_.primary().activate();
  }

  static constexpr int kDeepEpSmem = 196608; // validate/testbed/shapes.yaml comm_smem_bytes
  Device& dev_;
  FILE* out_;
  bool quick_;
  NvmlSampler sampler_;
  void *flush_ = nullptr, *ws_ = nullptr, *x_ = nullptr, *w_ = nullptr, *y_ = nullptr, *src_ = nullptr, *dst_ = nullptr;
  float* one_         = nullptr;
  unsigned* seen_     = nullptr;
  size_t flush_bytes_ = 0, ws_bytes_ = 64u << 20, copy_bytes_ = 256u << 20;
  double settle_ms_   = 150.0;
  float comm_pass_ms_ = 0;
};

} // namespace

int main(int argc, char** argv)
{
  std::string out, clock_log;
  bool quick     = false;
  double seconds = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--quick")
      quick = true;
    else if (a == "--clock-log" && i + 2 < argc) {
      clock_log = argv[++i];
      seconds   = std::stod(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: dbosim-smtable-diag --out FILE.jsonl [--quick] | --clock-log FILE.csv SECONDS\n");
      return 2;
    }
  }
  if (!clock_log.empty()) { // only sample the clock (beside another program), 1 ms period, CSV
    NvmlSampler smp(1000, seconds + 10);
    const double t0        = now_ms();
    const std::string stop = clock_log + ".stop"; // another program's end: `touch FILE.csv.stop`
    while (now_ms() - t0 < 1e3 * seconds && !std::ifstream(stop))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    FILE* f = std::fopen(clock_log.c_str(), "w");
    if (!f)
      return 1;
    std::fprintf(f, "t_ms,sm_mhz,power_w\n");
    for (const auto& s : smp.samples(t0, now_ms()))
      std::fprintf(f, "%.2f,%.0f,%.1f\n", s.t_ms - t0, s.sm_mhz, s.power_w);
    std::fclose(f);
    return 0;
  }
  if (out.empty()) {
    std::fprintf(stderr, "usage: dbosim-smtable-diag --out FILE.jsonl [--quick] | --clock-log FILE.csv SECONDS\n");
    return 2;
  }
  FILE* f = std::fopen(out.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", out.c_str());
    return 1;
  }
  try {
    Device dev(0);
    Diag d(dev, f, quick);
    const int full = dev.sm_count();
    d.partitions({full - 20, full - 32, 96, 104});
    const std::vector<Shape> shapes = {{"A0", 2112, 7168}, {"A1", 7168, 16384}, {"MLP", 4096, 7168}, {"S", 7168, 2048}};
    const std::vector<int> sms      = {full, full - 20, full - 32};
    // clock settling: the testbed's largest GEMM back to back, full GPU, then each partition alone and beside comm
    d.trace(shapes[1], 4096, full, false, 600);
    d.trace(shapes[1], 4096, full - 20, false, 600);
    d.trace(shapes[1], 4096, full - 20, true, 600);
    d.trace(shapes[1], 4096, full - 32, false, 600);
    for (int tokens : quick ? std::vector<int>{256, 2048} : std::vector<int>{128, 256, 2048, 4096})
      for (const Shape& sh : shapes) {
        d.group(sh, tokens, sms);
        std::printf("done %s tokens=%d\n", sh.name, tokens);
        std::fflush(stdout);
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dbosim-smtable-diag: %s\n", e.what());
    std::fclose(f);
    return 1;
  }
  std::fclose(f);
  return 0;
}

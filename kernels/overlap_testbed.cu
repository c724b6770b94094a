/* dbosim overlap testbed — executes a DBO-shaped schedule on one GPU and records every kernel's start and end.
 *
 *   dbosim-overlap-testbed PLAN.txt... --out DIR [--reps N]
 *
 * A plan file is written by `dbosim validate --write-testbed-plans` from the engine's own schedule builders
 * (serial, async_combine, dbo): one op per line in host issue order, its stream, its kernel, and the ops of the other
 * stream it waits on (a CUDA event recorded after the producer, cudaStreamWaitEvent before the consumer, as vLLM's
 * schedules join their streams). Compute ops are cuBLASLt BF16 GEMMs (kernels/Gemm.hpp); comm ops are the SM-resident
 * copy kernel with a fixed CTA count (kernels/Kernels.hpp), what DeepEP's high-throughput kernels do with their SMs.
 * `comm_smem_bytes N` makes each copy CTA reserve N bytes of dynamic shared memory (DeepEP's high-throughput kernels
 * reserve 196608 B: one CTA per SM, and no GEMM CTA fits beside it). With `partition_compute_sms > 0` the compute
 * stream lives in a green context of that many SMs and the comm stream in the rest (kernels/ExecEnv.hpp), cuBLAS told
 * its SM budget. With `comm_priority high` the comm stream is created at the device's greatest stream priority (its
 * CTAs are scheduled first when SMs free up; running CTAs are not preempted).
 *
 * The host issues a whole step behind a gate (a spin kernel both streams wait on), so the replay is GPU-bound: the
 * recording measures overlap, partitions and interference, not launch costs. One untimed step warms up; then `reps`
 * timed steps. Each kernel is bracketed by CUDA events of its stream's context; times are relative to a base event
 * recorded on each stream right after the gate (the comm stream's base follows a wait on the gate: a few µs of
 * cross-stream offset at most). Output: DIR/<plan name>.json, Chrome trace JSON (traceEvents, ph "X", pid = repeat,
 * tid = stream), args {kind, layer, ubatch, rep}. Needs only CUDA, cuBLAS(Lt) and the C++ standard library. */
#include "kernels/ExecEnv.hpp"
#include "kernels/Gemm.hpp"
#include "kernels/Kernels.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace dbosim::kern;

__global__ void spin_kernel(unsigned long long ns)
{
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

struct PlanOp {
  int id = 0;
  std::string kind;
  int layer = 0, ubatch = 0, stream = 0;
  std::string kernel;       ///< "gemm" or "copy"
  long m = 0, n = 0, k = 0; ///< gemm
  long bytes = 0, ctas = 0; ///< copy
  std::vector<int> waits;
};

struct Plan {
  std::string name;
  int partition_compute_sms = 0;
  bool comm_high_priority   = false; ///< the comm stream at the device's greatest priority
  int comm_smem_bytes       = 0;     ///< dynamic shared memory each copy CTA reserves (one CTA per SM, as DeepEP)
  std::vector<PlanOp> ops;
};

Plan read_plan(const std::string& path)
{
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  Plan p;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string word;
    if (!(ss >> word) || word[0] == '#')
      continue;
    if (word == "name")
      ss >> p.name;
    else if (word == "partition_compute_sms")
      ss >> p.partition_compute_sms;
    else if (word == "comm_smem_bytes")
      ss >> p.comm_smem_bytes;
    else if (word == "comm_priority") {
      std::string v;
      ss >> v;
      p.comm_high_priority = v == "high";
    } else if (word == "op") {
      PlanOp o;
      ss >> o.id >> o.kind >> o.layer >> o.ubatch >> o.stream >> o.kernel;
      if (o.kernel == "gemm")
        ss >> o.m >> o.n >> o.k;
      else if (o.kernel == "copy")
        ss >> o.bytes >> o.ctas;
      else
        throw std::runtime_error(path + ": unknown kernel " + o.kernel);
      std::string w;
      ss >> w; // "waits"
      int id;
      while (ss >> id)
        o.waits.push_back(id);
      if (o.id != static_cast<int>(p.ops.size()))
        throw std::runtime_error(path + ": op ids must be 0.. in order");
      p.ops.push_back(o);
    } else
      throw std::runtime_error(path + ": unknown line " + line);
  }
  if (p.name.empty() || p.ops.empty())
    throw std::runtime_error(path + ": no name or no ops");
  return p;
}

class Runner {
public:
  Runner(Device& dev, const Plan& plan) : dev_(dev), plan_(plan)
  {
    if (plan.partition_compute_sms > 0) {
      Partition& part = dev.partition(plan.partition_compute_sms);
      if (!part.rest)
        throw std::runtime_error("no SMs left for the comm stream");
      env_[0]    = part.compute.get();
      env_[1]    = part.rest.get();
      stream_[0] = env_[0]->stream();
      stream_[1] = env_[1]->stream();
    } else {
      env_[0] = env_[1] = &dev.primary();
      stream_[0]        = dev.primary().stream();
      stream_[1]        = dev.primary().side_stream();
    }
    if (plan.comm_high_priority) {
      int least = 0, greatest = 0;
      env_[1]->activate();
      CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      CUDA_CHECK(cudaStreamCreateWithPriority(&own_comm_, cudaStreamNonBlocking, greatest));
      stream_[1] = own_comm_;
    }
    dev.primary().activate();
    long max_x = 0, max_y = 0, max_copy = 0;
    for (const PlanOp& o : plan.ops) {
      max_x    = std::max(max_x, o.m * o.k);
      max_y    = std::max(max_y, o.m * o.n);
      max_copy = std::max(max_copy, o.bytes);
    }
    CUDA_CHECK(cudaMalloc(&x_, 2 * max_x + 16));
    CUDA_CHECK(cudaMalloc(&y_, 2 * max_y + 16));
    CUDA_CHECK(cudaMalloc(&src_, max_copy + 16));
    CUDA_CHECK(cudaMalloc(&dst_, max_copy + 16));
    CUDA_CHECK(cudaMalloc(&ws_, ws_bytes_));
    CUDA_CHECK(cudaMalloc(&one_, sizeof(float)));
    const float one = 1.0f;
    CUDA_CHECK(cudaMemcpy(one_, &one, sizeof(float), cudaMemcpyHostToDevice));
    fill_bf16(x_, max_x, 1, nullptr);
    CUDA_CHECK(cudaMemset(src_, 0, max_copy + 16));
    for (const PlanOp& o : plan.ops)
      if (o.kernel == "gemm") {
        auto key = std::make_tuple(o.m, o.n, o.k);
        if (!weights_.count({o.n, o.k})) {
          void* w = nullptr;
          CUDA_CHECK(cudaMalloc(&w, 2 * o.n * o.k));
          fill_bf16(w, o.n * o.k, 2, nullptr);
          weights_[{o.n, o.k}] = w;
        }
        if (!gemms_.count(key)) {
          env_[0]->activate();
          const int target = env_[0]->green() ? env_[0]->sms() : 0;
          auto g = std::make_unique<LtGemm>(env_[0]->lt(), false, int(o.m), int(o.n), int(o.k), 1, target, ws_,
                                            ws_bytes_, one_);
          g->select(x_, weights_[{o.n, o.k}], y_, stream_[0]);
          gemms_[key] = std::move(g);
        }
      }
    CUDA_CHECK(cudaDeviceSynchronize());
    const size_t n = plan.ops.size();
    for (int s = 0; s < 2; ++s) {
      env_[s]->activate();
      CUDA_CHECK(cudaEventCreate(&base_[s]));
    }
    begin_.resize(n);
    end_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      env_[plan.ops[i].stream]->activate();
      CUDA_CHECK(cudaEventCreate(&begin_[i]));
      CUDA_CHECK(cudaEventCreate(&end_[i]));
    }
    env_[0]->activate();
    CUDA_CHECK(cudaEventCreateWithFlags(&gate_, cudaEventDisableTiming));
    dev.primary().activate();
  }

  /** Issues one step behind the gate; returns per-op (start, end) in µs from the stream bases. */
  std::vector<std::pair<double, double>> step()
  {
    env_[0]->activate();
    spin_kernel<<<1, 1, 0, stream_[0]>>>(20'000'000ull); // 20 ms: the host issues the whole step meanwhile
    LAUNCH_CHECK();
    CUDA_CHECK(cudaEventRecord(gate_, stream_[0]));
    CUDA_CHECK(cudaEventRecord(base_[0], stream_[0]));
    env_[1]->activate();
    CUDA_CHECK(cudaStreamWaitEvent(stream_[1], gate_, 0));
    CUDA_CHECK(cudaEventRecord(base_[1], stream_[1]));
    for (const PlanOp& o : plan_.ops) {
      cudaStream_t s = stream_[o.stream];
      env_[o.stream]->activate();
      for (int w : o.waits)
        CUDA_CHECK(cudaStreamWaitEvent(s, end_[w], 0));
      CUDA_CHECK(cudaEventRecord(begin_[o.id], s));
      if (o.kernel == "gemm")
        gemms_.at(std::make_tuple(o.m, o.n, o.k))->run(x_, weights_.at({o.n, o.k}), y_, s);
      else
        copy_ctas(dst_, src_, size_t(o.bytes) / 16 * 16, 1, int(o.ctas), plan_.comm_smem_bytes, s);
      CUDA_CHECK(cudaEventRecord(end_[o.id], s));
    }
    for (int s = 0; s < 2; ++s) {
      env_[s]->activate();
      CUDA_CHECK(cudaStreamSynchronize(stream_[s]));
    }
    std::vector<std::pair<double, double>> t;
    for (const PlanOp& o : plan_.ops) {
      float b = 0, e = 0;
      env_[o.stream]->activate();
      CUDA_CHECK(cudaEventElapsedTime(&b, base_[o.stream], begin_[o.id]));
      CUDA_CHECK(cudaEventElapsedTime(&e, base_[o.stream], end_[o.id]));
      t.emplace_back(1e3 * b, 1e3 * e);
    }
    dev_.primary().activate();
    return t;
  }

  ~Runner()
  {
    dev_.primary().activate();
    cudaDeviceSynchronize();
    if (own_comm_) {
      env_[1]->activate();
      cudaStreamDestroy(own_comm_);
      dev_.primary().activate();
    }
    gemms_.clear();
    for (auto& [k, w] : weights_)
      cudaFree(w);
    for (void* p : {x_, y_, src_, dst_, ws_, static_cast<void*>(one_)})
      cudaFree(p);
  }

private:
  Device& dev_;
  const Plan& plan_;
  ExecEnv* env_[2]        = {nullptr, nullptr};
  cudaStream_t stream_[2] = {nullptr, nullptr};
  cudaEvent_t base_[2]    = {nullptr, nullptr};
  cudaEvent_t gate_       = nullptr;
  cudaStream_t own_comm_  = nullptr;
  std::vector<cudaEvent_t> begin_, end_;
  void *x_ = nullptr, *y_ = nullptr, *src_ = nullptr, *dst_ = nullptr, *ws_ = nullptr;
  float* one_      = nullptr;
  size_t ws_bytes_ = 64u << 20;
  std::map<std::pair<long, long>, void*> weights_;
  std::map<std::tuple<long, long, long>, std::unique_ptr<LtGemm>> gemms_;
};

void write_trace(const std::string& path, const Plan& plan,
                 const std::vector<std::vector<std::pair<double, double>>>& reps, const std::string& gpu)
{
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f)
    throw std::runtime_error("cannot write " + path);
  std::fprintf(f,
               "{\"otherData\": {\"plan\": \"%s\", \"gpu\": \"%s\", \"partition_compute_sms\": %d, "
               "\"comm_smem_bytes\": %d, \"reps\": %zu},\n",
               plan.name.c_str(), gpu.c_str(), plan.partition_compute_sms, plan.comm_smem_bytes, reps.size());
  std::fprintf(f, "\"traceEvents\": [\n");
  bool first = true;
  for (size_t r = 0; r < reps.size(); ++r)
    for (const PlanOp& o : plan.ops) {
      const auto [b, e] = reps[r][o.id];
      std::fprintf(f,
                   "%s{\"name\": \"%s\", \"ph\": \"X\", \"pid\": %zu, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                   "\"args\": {\"kind\": \"%s\", \"layer\": %d, \"ubatch\": %d, \"rep\": %zu, \"op\": %d}}",
                   first ? "" : ",\n", o.kind.c_str(), r, o.stream, b, e - b, o.kind.c_str(), o.layer, o.ubatch, r,
                   o.id);
      first = false;
    }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
}

} // namespace

int main(int argc, char** argv)
{
  std::vector<std::string> plans;
  std::string out = ".";
  int reps        = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
    else
      plans.push_back(a);
  }
  if (plans.empty()) {
    std::fprintf(stderr, "usage: dbosim-overlap-testbed PLAN.txt... --out DIR [--reps N]\n");
    return 2;
  }
  try {
    Device dev(0);
    const std::string gpu    = dev.props().name;
    const cudaDeviceProp& pr = dev.props();
    std::printf("device %s: %d SMs, per SM %d threads, %d CTAs, %zu B shared memory (%zu B per CTA opt-in), %d "
                "registers\n",
                pr.name, pr.multiProcessorCount, pr.maxThreadsPerMultiProcessor, pr.maxBlocksPerMultiProcessor,
                pr.sharedMemPerMultiprocessor, pr.sharedMemPerBlockOptin, pr.regsPerMultiprocessor);
    for (const std::string& path : plans) {
      const Plan plan = read_plan(path);
      Runner runner(dev, plan);
      std::printf("%-40s copy kernel: %d B shared memory per CTA, %d CTAs of 1024 threads fit per SM\n",
                  plan.name.c_str(), plan.comm_smem_bytes, copy_ctas_per_sm(plan.comm_smem_bytes));
      runner.step(); // warm-up
      std::vector<std::vector<std::pair<double, double>>> rec;
      for (int r = 0; r < reps; ++r)
        rec.push_back(runner.step());
      double makespan = 0;
      std::vector<double> spans;
      for (const auto& t : rec) {
        double lo = 1e300, hi = 0;
        for (const auto& [b, e] : t) {
          lo = std::min(lo, b);
          hi = std::max(hi, e);
        }
        spans.push_back(hi - lo);
      }
      std::sort(spans.begin(), spans.end());
      makespan = spans[spans.size() / 2];
      write_trace(out + "/" + plan.name + ".json", plan, rec, gpu);
      std::printf("%-40s ops %3zu  median makespan %9.1f us  (min %.1f max %.1f)\n", plan.name.c_str(), plan.ops.size(),
                  makespan, spans.front(), spans.back());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dbosim-overlap-testbed: %s\n", e.what());
    return 1;
  }
  return 0;
}

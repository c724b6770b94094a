#include "calibrate/SuitePlan.hpp"

#include "hw/HwProfile.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dbosim::calib {
namespace {

/** Dynamic shared memory per CTA of DeepEP's intranode dispatch kernel (csrc/kernels/intranode.cu: kNumThreads 768,
 *  kNumTMABytesPerWarp 8192, smem_size = 8192 x 768/32 = 196608 B): more than half an H100/H200 SM's 228 KiB, so one
 *  CTA per SM. The interference points give the copy kernel the same reservation. */
constexpr int deepep_ht_smem_bytes = 196608;

/** SMs a DBO run leaves to communication: vLLM's VLLM_DBO_COMM_SMS default, and the wider 32-SM split the
 *  interference points also measure. */
constexpr int dbo_comm_sms      = models::vllm_dbo_comm_sms;
constexpr int dbo_comm_sms_wide = 32;

/** @brief Powers of two from lo to hi, with the midpoint 1.5 x 2^i added from `dense_from` on (where durations
 *  stop being flat in tokens and linear interpolation between powers of two is least accurate). */
std::vector<int> token_grid(int lo, int hi, int dense_from)
{
  std::vector<int> v;
  for (int x = lo; x <= hi; x *= 2) {
    v.push_back(x);
    if (x >= dense_from && x + x / 2 < hi)
      v.push_back(x + x / 2);
  }
  return v;
}

MeasureSpec spec(std::string family, std::map<std::string, double> params, std::string variant = "")
{
  return MeasureSpec{std::move(family), std::move(variant), std::move(params)};
}

} // namespace

const std::vector<GemmShape>& zoo_gemm_shapes()
{
  static const std::vector<GemmShape> shapes = {
      {4096, 7168, "DeepSeek-V3/Kimi-K2 shared expert gate_up (2x2048); the acceptance GEMM"},
      {2112, 7168, "DeepSeek-V3/Kimi-K2 fused q_a+kv_a (1536+512+64)"},
      {24576, 1536, "DeepSeek-V3 q_b (128 heads x 192)"},
      {12288, 1536, "Kimi-K2 q_b (64 heads x 192)"},
      {32768, 512, "DeepSeek-V3 kv_b (128 heads x 256)"},
      {7168, 16384, "DeepSeek-V3 o_proj (128 heads x 128)"},
      {7168, 8192, "Kimi-K2 o_proj (64 heads x 128)"},
      {7168, 2048, "DeepSeek-V3/Kimi-K2 shared expert down"},
      {36864, 7168, "DeepSeek-V3 dense MLP gate_up (2x18432)"},
      {7168, 18432, "DeepSeek-V3 dense MLP down"},
      {9216, 4096, "Qwen3-235B-A22B qkv ((64+2x4) heads x 128)"},
      {4096, 8192, "Qwen3-235B-A22B o_proj (64 heads x 128)"},
      {5120, 2048, "Qwen3-30B-A3B qkv ((32+2x4) heads x 128)"},
      {2048, 4096, "Qwen3-30B-A3B o_proj (32 heads x 128)"},
      {6144, 4096, "Mixtral-8x7B qkv ((32+2x8) heads x 128)"},
      {4096, 4096, "Mixtral-8x7B o_proj"},
      {3072, 2048, "DeepSeek-V2-Lite q_proj (16 heads x 192)"},
      {576, 2048, "DeepSeek-V2-Lite kv_a (512+64)"},
      {4096, 512, "DeepSeek-V2-Lite kv_b (16 heads x 256)"},
      {2048, 2048, "DeepSeek-V2-Lite o_proj (16 heads x 128)"},
      {5632, 2048, "DeepSeek-V2-Lite shared experts gate_up (2x2x1408)"},
      {2048, 2816, "DeepSeek-V2-Lite shared experts down"},
  };
  return shapes;
}

const std::vector<ExpertShape>& zoo_expert_shapes()
{
  static const std::vector<ExpertShape> shapes = {
      {4096, 7168, {8, 16, 32}, "DeepSeek-V3/Kimi-K2 expert gate_up (2x2048)"},
      {7168, 2048, {8, 16, 32}, "DeepSeek-V3/Kimi-K2 expert down"},
      {3072, 4096, {8, 16, 32}, "Qwen3-235B-A22B expert gate_up (2x1536)"},
      {4096, 1536, {8, 16, 32}, "Qwen3-235B-A22B expert down"},
      {1536, 2048, {8, 16, 32}, "Qwen3-30B-A3B expert gate_up (2x768)"},
      {2048, 768, {8, 16, 32}, "Qwen3-30B-A3B expert down"},
      {28672, 4096, {1, 2, 4, 8}, "Mixtral-8x7B expert gate_up (2x14336)"},
      {4096, 14336, {1, 2, 4, 8}, "Mixtral-8x7B expert down"},
      {2816, 2048, {4, 8, 16}, "DeepSeek-V2-Lite expert gate_up (2x1408)"},
      {2048, 1408, {4, 8, 16}, "DeepSeek-V2-Lite expert down"},
  };
  return shapes;
}

const std::vector<int>& partition_sms()
{
  static const std::vector<int> sms = {132, 124, 116, 112, 108, 100, 92, 68};
  return sms;
}

std::vector<int> skewed_tokens(int experts, int mean)
{
  std::vector<double> w(static_cast<size_t>(experts));
  for (int e = 0; e < experts; ++e)
    w[static_cast<size_t>(e)] = 1.0 / (e + 1);
  double sum = std::accumulate(w.begin(), w.end(), 0.0);
  long total = static_cast<long>(experts) * mean;
  long given = 0;
  std::vector<int> out(static_cast<size_t>(experts));
  for (int e = 0; e < experts; ++e) {
    out[static_cast<size_t>(e)] = static_cast<int>(std::floor(total * w[static_cast<size_t>(e)] / sum));
    given += out[static_cast<size_t>(e)];
  }
  for (int e = 0; given < total; e = (e + 1) % experts, ++given) // hand out the rounding remainder, largest first
    ++out[static_cast<size_t>(e)];
  return out;
}

const std::vector<int>& sm_table_tokens()
{
  static const std::vector<int> tokens = {16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
  return tokens;
}

std::vector<int> sm_table_sms(int sm_count) { return {sm_count - dbo_comm_sms, sm_count - dbo_comm_sms_wide}; }

std::vector<MeasureSpec> sm_table_plan(int sm_count, const std::map<std::string, double>& timing)
{
  std::vector<MeasureSpec> plan;
  std::vector<int> sms = {sm_count}; // the full-GPU baseline of each point, measured beside its partitions
  for (int s : sm_table_sms(sm_count))
    sms.push_back(s);
  for (const auto& s : zoo_gemm_shapes())
    for (const char* family : {"gemm_bf16", "gemm_fp8"})
      for (int m : sm_table_tokens())
        for (int budget : sms) {
          std::map<std::string, double> p = {{"n", s.n}, {"k", s.k}, {"tokens", m}, {"sms", budget}};
          p.insert(timing.begin(), timing.end());
          plan.push_back(spec("sm_table", p, family));
        }
  return plan;
}

namespace {

/** The token counts of the dense GEMMs, norms and activations. */
std::vector<int> dense_tokens(bool full)
{
  return full ? token_grid(1, 16384, 32) : std::vector<int>{1, 16, 128, 1024, 4096, 16384};
}

/** Host costs and the comm-like copy kernel first: cheap, and needed by every profile. */
void add_host_and_copy_kernel(std::vector<MeasureSpec>& plan, bool full)
{
  for (const char* what :
       {"launch", "graph_kernel", "event_record", "stream_wait_event", "stream_sync", "launch_sync_roundtrip"})
    plan.push_back(spec("host", {}, what));
  std::vector<int> ctas = {1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64, 96, 132, 264};
  if (!full)
    ctas = {4, 8, 16, 24, 32, 64, 132};
  for (int c : ctas)
    plan.push_back(spec("copy_kernel", {{"ctas", c}, {"mib", 1024}}));
}

/** Dense GEMMs: every zoo projection over tokens, BF16 then FP8. */
void add_dense_gemms(std::vector<MeasureSpec>& plan, bool full, const std::vector<int>& tokens)
{
  auto gemm_shapes = zoo_gemm_shapes();
  if (!full)
    gemm_shapes.resize(4);
  for (const char* family : {"gemm_bf16", "gemm_fp8"})
    for (const auto& s : gemm_shapes)
      for (int m : tokens)
        plan.push_back(spec(family, {{"n", s.n}, {"k", s.k}, {"tokens", m}}));
}

/** SM partitions (green contexts) and interference: the families the simulator scales. */
void add_sm_partitions(std::vector<MeasureSpec>& plan, bool full, int sm_count)
{
  std::vector<MeasureSpec> scaled = {
      spec("gemm_bf16", {{"n", 4096}, {"k", 7168}, {"tokens", 4096}}),
      spec("gemm_bf16", {{"n", 4096}, {"k", 7168}, {"tokens", 256}}),
      spec("gemm_bf16", {{"n", 7168}, {"k", 2048}, {"tokens", 16384}}),
      spec("gemm_bf16", {{"n", 24576}, {"k", 1536}, {"tokens", 1024}}),
      spec("gemm_bf16", {{"n", 4096}, {"k", 7168}, {"tokens", 16}}),
      spec("gemm_fp8", {{"n", 4096}, {"k", 7168}, {"tokens", 4096}}),
      spec("gemm_fp8", {{"n", 7168}, {"k", 2048}, {"tokens", 1024}}),
      spec("grouped_gemm_bf16", {{"experts", 32}, {"n", 4096}, {"k", 7168}, {"tokens", 256}}),
      spec("grouped_gemm_bf16", {{"experts", 32}, {"n", 7168}, {"k", 2048}, {"tokens", 64}}),
      spec("grouped_gemm_fp8", {{"experts", 32}, {"n", 4096}, {"k", 7168}, {"tokens", 256}}),
      spec("grouped_gemm_fp8", {{"experts", 16}, {"n", 7168}, {"k", 2048}, {"tokens", 1024}}),
      spec("mla_decode", {{"context", 4096}, {"heads", 128}, {"tokens", 64}}),
      spec("mla_decode", {{"context", 16384}, {"heads", 64}, {"tokens", 16}}),
      spec("attention_prefill", {{"heads", 128}, {"head_dim", 192}, {"tokens", 4096}}),
      spec("attention_prefill", {{"heads", 64}, {"head_dim", 128}, {"tokens", 1024}}),
      spec("rmsnorm", {{"hidden", 7168}, {"tokens", 8192}}),
      spec("silu_mul", {{"hidden", 2048}, {"tokens", 8192}}),
  };
  std::vector<MeasureSpec> interfering = {scaled[0], scaled[7], scaled[11]};
  if (!full)
    scaled = {scaled[0], scaled[7], scaled[11], scaled[15]};
  // kernel outer, SMs inner: a kernel's partitions are measured close in time to its full-GPU baseline
  for (const auto& k : scaled)
    for (int sms : partition_sms()) {
      MeasureSpec p   = k;
      p.variant       = k.family;
      p.family        = "sm_scaling";
      p.params["sms"] = std::max(8, sms * sm_count / 132);
      plan.push_back(p);
    }
  for (double partitioned : {0.0, 1.0})
    for (const auto& k : interfering)
      for (int comm_ctas : full ? std::vector<int>{20, 32} : std::vector<int>{20}) {
        MeasureSpec p           = k;
        p.variant               = k.family;
        p.family                = "interference";
        p.params["partitioned"] = partitioned;
        p.params["comm_ctas"]   = comm_ctas;
        // DeepEP-like residency: one comm CTA per SM, no compute CTA beside it (kern::copy_ctas)
        p.params["comm_smem_bytes"] = deepep_ht_smem_bytes;
        plan.push_back(p);
      }
}

/** Grouped expert GEMMs: balanced over experts x tokens per expert, then skewed; the cuBLAS grouped API. */
void add_grouped_gemms(std::vector<MeasureSpec>& plan, bool full)
{
  const std::vector<int> tpe = full ? token_grid(1, 4096, 32) : std::vector<int>{1, 16, 128, 1024};
  auto expert_shapes         = zoo_expert_shapes();
  if (!full)
    expert_shapes.resize(2);
  for (const char* family : {"grouped_gemm_bf16", "grouped_gemm_fp8"})
    for (const auto& s : expert_shapes)
      for (int e : s.experts) {
        if (!full && e != s.experts.back())
          continue;
        for (int t : tpe)
          plan.push_back(spec(family, {{"experts", e}, {"n", s.n}, {"k", s.k}, {"tokens", t}}));
      }
  for (const char* family : {"grouped_gemm_bf16_skewed", "grouped_gemm_fp8_skewed"})
    for (size_t i = 0; i < (full ? expert_shapes.size() : 1); ++i) {
      const auto& s = expert_shapes[i];
      if (s.experts.back() < 8)
        continue;
      for (int t : tpe)
        if (t >= 4)
          plan.push_back(spec(family, {{"experts", s.experts.back()}, {"n", s.n}, {"k", s.k}, {"tokens", t}}));
    }
  // the cuBLAS grouped API (cublasGemmGroupedBatchedEx) for comparison with the strided-batched cuBLASLt kernels
  for (size_t i = 0; i < (full ? 2u : 1u); ++i)
    for (int t : tpe)
      plan.push_back(spec("grouped_gemm_bf16_api",
                          {{"experts", 32}, {"n", expert_shapes[i].n}, {"k", expert_shapes[i].k}, {"tokens", t}}));
}

/** Attention: MLA decode (batch x context) and causal prefill (prompt tokens). */
void add_attention(std::vector<MeasureSpec>& plan, bool full)
{
  const std::vector<int> contexts =
      full ? std::vector<int>{512, 1024, 2048, 4096, 8192, 16384, 32768} : std::vector<int>{1024, 8192};
  const std::vector<int> batches = full ? token_grid(1, 256, 16) : std::vector<int>{1, 16, 128};
  for (int heads : full ? std::vector<int>{128, 64, 16} : std::vector<int>{128})
    for (int c : contexts)
      for (int b : batches)
        plan.push_back(spec("mla_decode", {{"context", c}, {"heads", heads}, {"tokens", b}}));
  const std::vector<std::pair<int, int>> prefill = {{128, 192}, {64, 128}, {32, 128}, {16, 192}};
  const std::vector<int> prompt                  = full ? token_grid(128, 16384, 128) : std::vector<int>{512, 4096};
  for (size_t i = 0; i < (full ? prefill.size() : 1); ++i)
    for (int t : prompt)
      plan.push_back(
          spec("attention_prefill", {{"heads", prefill[i].first}, {"head_dim", prefill[i].second}, {"tokens", t}}));
}

/** Norms and activations. */
void add_norms(std::vector<MeasureSpec>& plan, bool full, const std::vector<int>& tokens)
{
  for (int h : full ? std::vector<int>{7168, 4096, 2048, 1536, 512} : std::vector<int>{7168})
    for (int m : tokens)
      plan.push_back(spec("rmsnorm", {{"hidden", h}, {"tokens", m}}));
  for (int h : full ? std::vector<int>{18432, 14336, 2048, 1536, 1408, 768} : std::vector<int>{2048})
    for (int m : tokens)
      plan.push_back(spec("silu_mul", {{"hidden", h}, {"tokens", m}}));
}

/** Multi-GPU collectives (recorded as skipped on one GPU). */
void add_collectives(std::vector<MeasureSpec>& plan, bool full)
{
  for (const char* what : {"alltoall", "sendrecv"})
    for (int mib : full ? std::vector<int>{1, 4, 16, 64, 256} : std::vector<int>{16})
      plan.push_back(spec("nccl", {{"mib", mib}}, what));
}

} // namespace

std::vector<MeasureSpec> build_plan(SuiteSize size, int sm_count)
{
  const bool full = size == SuiteSize::full;
  std::vector<MeasureSpec> plan;
  add_host_and_copy_kernel(plan, full);
  const std::vector<int> tokens = dense_tokens(full);
  add_dense_gemms(plan, full, tokens);
  add_sm_partitions(plan, full, sm_count);
  // ---- per-shape SM tables: every zoo dense GEMM at the DBO compute partitions (family "sm_table", measured
  //      exactly like sm_scaling; a family of its own so the median curves above stay the 7-kernel fit)
  if (full)
    for (const auto& p : sm_table_plan(sm_count))
      plan.push_back(p);

  add_grouped_gemms(plan, full);
  add_attention(plan, full);
  add_norms(plan, full, tokens);
  add_collectives(plan, full);
  return plan;
}

std::vector<MeasureSpec> build_verify_plan()
{
  return {spec("gemm_bf16", {{"n", 4096}, {"k", 7168}, {"tokens", 4096}}),
          spec("copy_kernel", {{"ctas", 24}, {"mib", 1024}}), spec("copy_kernel", {{"ctas", 132}, {"mib", 1024}})};
}

} // namespace dbosim::calib

/* dbosim calibration kernels — the kernel catalogue of the CUDA backend: for each family, the buffers (random
 * data), the prepared cuBLAS/cuBLASLt plans or hand-written kernels, and what one launch computes and moves. */
#include "calibrate/SuitePlan.hpp"
#include "kernels/CudaBackend.hpp"
#include "kernels/Gemm.hpp"
#include "kernels/Kernels.hpp"

#include <algorithm>
#include <cmath>

namespace dbosim::kern {
namespace {
using Params = std::map<std::string, double>;

int geti(const Params& p, const char* key)
{
  auto it = p.find(key);
  if (it == p.end())
    throw std::runtime_error(std::string("missing parameter ") + key);
  return static_cast<int>(it->second);
}

constexpr int kMlaLatent = 512; // kv_lora_rank: the latent that is both K (with the rope part) and V
constexpr int kMlaRope   = 64;  // qk_rope_head_dim

} // namespace

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

} // namespace dbosim::kern

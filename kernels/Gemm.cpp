#include "kernels/Gemm.hpp"

#include <cstdint>

namespace dbosim::kern {

LtGemm::LtGemm(cublasLtHandle_t lt, bool fp8, int tokens, int n, int k, int batch, int sm_target, void* workspace,
               size_t workspace_bytes, const float* one_device)
    : lt_(lt), ws_(workspace), ws_bytes_(workspace_bytes)
{
  const cudaDataType_t in_t = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (sm_target > 0) {
    int32_t t = sm_target;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &t, sizeof t));
  }
  if (fp8) { // per-tensor scales of 1 (what a per-tensor FP8 checkpoint passes)
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &one_device, sizeof one_device));
    CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &one_device, sizeof one_device));
  }
  // column-major: A = W stored k x n (op T), B = x stored k x tokens, C = y stored n x tokens
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, in_t, k, n, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, in_t, k, tokens, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, CUDA_R_16BF, n, tokens, n));
  if (batch > 1) {
    int32_t bc = batch;
    int64_t sa = int64_t(n) * k, sb = int64_t(k) * tokens, sc = int64_t(n) * tokens;
    for (auto [l, stride] : {std::pair{a_, sa}, std::pair{b_, sb}, std::pair{c_, sc}}) {
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
      CUBLAS_CHECK(
          cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }
  cublasLtMatmulPreference_t pref;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes_,
                                                    sizeof ws_bytes_));
  int found = 0;
  candidates_.resize(8);
  cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, op_, a_, b_, c_, c_, pref, 8, candidates_.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0)
    throw std::runtime_error(std::string("no cuBLASLt algorithm (") + cublasGetStatusName(st) + ")");
  candidates_.resize(static_cast<size_t>(found));
}

LtGemm::~LtGemm()
{
  if (c_)
    cublasLtMatrixLayoutDestroy(c_);
  if (b_)
    cublasLtMatrixLayoutDestroy(b_);
  if (a_)
    cublasLtMatrixLayoutDestroy(a_);
  if (op_)
    cublasLtMatmulDescDestroy(op_);
}

void LtGemm::run(const void* x, const void* w, void* y, cudaStream_t s) const
{
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(lt_, op_, &alpha, w, a_, x, b_, &beta, y, c_, y, c_, &candidates_[chosen_].algo, ws_,
                              ws_bytes_, s));
}

void LtGemm::select(const void* x, const void* w, void* y, cudaStream_t s)
{
  const float alpha = 1.0f, beta = 0.0f;
  std::string last;
  for (chosen_ = 0; chosen_ < candidates_.size(); ++chosen_) {
    cublasStatus_t st = cublasLtMatmul(lt_, op_, &alpha, w, a_, x, b_, &beta, y, c_, y, c_, &candidates_[chosen_].algo,
                                       ws_, ws_bytes_, s);
    cudaError_t ce    = cudaStreamSynchronize(s);
    if (ce != cudaSuccess)
      CUDA_CHECK(ce); // the kernel launched and then failed: not a launch-configuration problem
    if (st == CUBLAS_STATUS_SUCCESS)
      return;
    (void)cudaGetLastError(); // a launch that the partition cannot host fails synchronously; try the next one
    last = std::string(cublasGetStatusName(st)) + "/" + cudaGetErrorName(ce);
  }
  chosen_ = 0;
  throw std::runtime_error("no cuBLASLt candidate executes (" + std::to_string(candidates_.size()) + " tried, last " +
                           last + ")");
}

std::string LtGemm::algo_info() const
{
  int id = 0, tile = 0, stages = 0, splitk = 0;
  size_t sz = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&candidates_[chosen_].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&candidates_[chosen_].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile,
                                       &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&candidates_[chosen_].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                       sizeof stages, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&candidates_[chosen_].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                       sizeof splitk, &sz);
  return "candidate=" + std::to_string(chosen_) + " algo=" + std::to_string(id) + " tile=" + std::to_string(tile) +
         " stages=" + std::to_string(stages) + " splitk=" + std::to_string(splitk);
}

GroupedGemm::GroupedGemm(const std::vector<int>& tokens, int n, int k, char* x, char* w, char* y, void** ptr_area,
                         cudaStream_t s)
{
  std::vector<void*> pa, pb, pc;
  size_t x_off = 0, y_off = 0;
  for (size_t e = 0; e < tokens.size(); ++e) {
    const int t = tokens[e];
    if (t > 0) {
      ta_.push_back(CUBLAS_OP_T);
      tb_.push_back(CUBLAS_OP_N);
      m_.push_back(n);
      n_.push_back(t);
      k_.push_back(k);
      lda_.push_back(k);
      ldb_.push_back(k);
      ldc_.push_back(n);
      size_.push_back(1);
      alpha_.push_back(1.0f);
      beta_.push_back(0.0f);
      pa.push_back(w + e * size_t(n) * k * 2);
      pb.push_back(x + x_off);
      pc.push_back(y + y_off);
    }
    x_off += size_t(t) * k * 2;
    y_off += size_t(t) * n * 2;
  }
  const size_t g = pa.size();
  a_             = ptr_area;
  b_             = ptr_area + g;
  c_             = ptr_area + 2 * g;
  CUDA_CHECK(cudaMemcpyAsync(a_, pa.data(), g * sizeof(void*), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyAsync(b_, pb.data(), g * sizeof(void*), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyAsync(c_, pc.data(), g * sizeof(void*), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}

void GroupedGemm::run(cublasHandle_t h) const
{
  CUBLAS_CHECK(cublasGemmGroupedBatchedEx(h, ta_.data(), tb_.data(), m_.data(), n_.data(), k_.data(), alpha_.data(), a_,
                                          CUDA_R_16BF, lda_.data(), b_, CUDA_R_16BF, ldb_.data(), beta_.data(), c_,
                                          CUDA_R_16BF, ldc_.data(), static_cast<int>(size_.size()), size_.data(),
                                          CUBLAS_COMPUTE_32F));
}

void bf16_strided_batched(cublasHandle_t h, bool trans_a, int m, int n, int k, float alpha, const void* a, int lda,
                          long long stride_a, const void* b, int ldb, long long stride_b, void* c, int ldc,
                          long long stride_c, int batch)
{
  const float beta = 0.0f;
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a,
                                          CUDA_R_16BF, lda, stride_a, b, CUDA_R_16BF, ldb, stride_b, &beta, c,
                                          CUDA_R_16BF, ldc, stride_c, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

} // namespace dbosim::kern

/* dbosim calibration kernels — matrix products through cuBLASLt (dense and strided-batched, BF16 and FP8 E4M3
 * with BF16 output) and cuBLAS (grouped BF16 GEMM, strided-batched BF16 for attention). Activations x[M,k],
 * weights W[n,k], output y[M,n], all row-major: the column-major "TN" product y^T = W x^T. */
#pragma once
#include "kernels/ExecEnv.hpp"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace dbosim::kern {

/** @brief A prepared cuBLASLt matmul (descriptors + the heuristic's first algorithm), reused across repeats. */
class LtGemm {
public:
  /** @param batch >1: strided batch (experts of equal token counts) */
  LtGemm(cublasLtHandle_t lt, bool fp8, int tokens, int n, int k, int batch, int sm_target, void* workspace,
         size_t workspace_bytes, const float* one_device);
  ~LtGemm();
  LtGemm(const LtGemm&)            = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  /** @brief y = x W^T (per batch entry). */
  void run(const void* x, const void* w, void* y, cudaStream_t s) const;
  /** @brief Runs the heuristic's candidates in order until one executes (some cannot launch on a green-context
   *  partition, e.g. clustered kernels on an SM set that ignores co-scheduling); keeps that one. */
  void select(const void* x, const void* w, void* y, cudaStream_t s);
  std::string algo_info() const;

private:
  cublasLtHandle_t lt_;
  cublasLtMatmulDesc_t op_  = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> candidates_;
  size_t chosen_ = 0;
  void* ws_;
  size_t ws_bytes_;
};

/** @brief Grouped BF16 GEMM (cublasGemmGroupedBatchedEx): expert e computes y_e[t_e, n] = x_e[t_e, k] W_e^T.
 *  Pointer arrays live in device memory at `ptr_area` (3 x experts pointers). Experts with 0 tokens are left out. */
class GroupedGemm {
public:
  GroupedGemm(const std::vector<int>& tokens, int n, int k, char* x, char* w, char* y, void** ptr_area, cudaStream_t s);
  void run(cublasHandle_t h) const;

private:
  std::vector<cublasOperation_t> ta_, tb_;
  std::vector<int> m_, n_, k_, lda_, ldb_, ldc_, size_;
  std::vector<float> alpha_, beta_;
  void **a_, **b_, **c_;
};

/** @brief C = alpha op(A) op(B), BF16 in and out, FP32 accumulate, strided batch (cuBLAS, column-major). */
void bf16_strided_batched(cublasHandle_t h, bool trans_a, int m, int n, int k, float alpha, const void* a, int lda,
                          long long stride_a, const void* b, int ldb, long long stride_b, void* c, int ldc,
                          long long stride_c, int batch);

} // namespace dbosim::kern

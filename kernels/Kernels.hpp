/* dbosim calibration kernels — the hand-written CUDA kernels (Kernels.cu): fills, the L2 flush, the SM-resident
 * copy kernel (what DeepEP's high-throughput kernels do with N CTAs), softmax, RMSNorm and SiLU-and-mul. */
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace dbosim::kern {

/** @brief Fills n bf16 values with uniform random numbers in [-1, 1) (deterministic in seed). */
void fill_bf16(void* p, size_t n, uint32_t seed, cudaStream_t s);
/** @brief Fills n bytes with random finite FP8 E4M3 values of magnitude <= 2. */
void fill_fp8(void* p, size_t n, uint32_t seed, cudaStream_t s);
/** @brief Copies bytes (a multiple of 16) from src to dst `passes` times with exactly `ctas` CTAs of 1024 threads.
 *  `smem_bytes` of dynamic shared memory are reserved per CTA (unused by the copy): with more than half an SM's shared
 *  memory, one CTA fits per SM and no other kernel's CTA that needs shared memory fits beside it, as with DeepEP's
 *  high-throughput kernels (intranode dispatch: 768 threads, 24 warps x 8192 B TMA buffer = 196608 B per CTA). */
void copy_ctas(void* dst, const void* src, size_t bytes, int passes, int ctas, int smem_bytes, cudaStream_t s);
/** @brief How many copy CTAs (1024 threads, `smem_bytes` dynamic shared memory) fit on one SM of the current device
 *  (cudaOccupancyMaxActiveBlocksPerMultiprocessor). */
int copy_ctas_per_sm(int smem_bytes);
/** @brief Row softmax in place over bf16 rows of length `cols` (scaled by `scale`). Causal: row r of a block of
 *  `causal_rows` rows keeps columns 0..(r % causal_rows) and zeroes the rest; 0 = no mask. */
void softmax_rows(void* p, long rows, int cols, float scale, int causal_rows, cudaStream_t s);
/** @brief y = x * rsqrt(mean(x^2) + eps) * w over [tokens, hidden] bf16. */
void rmsnorm(void* y, const void* x, const void* w, int tokens, int hidden, cudaStream_t s);
/** @brief y[t, i] = silu(x[t, i]) * x[t, hidden + i] over x [tokens, 2 hidden] bf16; grid fixed at `grid` CTAs. */
void silu_mul(void* y, const void* x, int tokens, int hidden, int grid, cudaStream_t s);
/** @brief An empty kernel (host-cost measurements). */
void empty_kernel(cudaStream_t s);

} // namespace dbosim::kern

#include "kernels/CudaCheck.hpp"
#include "kernels/Kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace dbosim::kern {
namespace {

__device__ __forceinline__ uint32_t hash32(uint32_t x)
{
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__global__ void fill_bf16_kernel(__nv_bfloat16* p, size_t n, uint32_t seed)
{
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = hash32(static_cast<uint32_t>(i) ^ hash32(seed + static_cast<uint32_t>(i >> 32)));
    p[i]       = __float2bfloat16(static_cast<float>(h) * (2.0f / 4294967296.0f) - 1.0f);
  }
}

__global__ void fill_fp8_kernel(__nv_fp8_e4m3* p, size_t n, uint32_t seed)
{
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = hash32(static_cast<uint32_t>(i) ^ hash32(seed + static_cast<uint32_t>(i >> 32)));
    p[i]       = __nv_fp8_e4m3(static_cast<float>(h) * (4.0f / 4294967296.0f) - 2.0f);
  }
}

/** Each CTA owns one contiguous slab; 16-byte accesses, four loads in flight per thread. */
__global__ void __launch_bounds__(1024)
    copy_kernel(int4* __restrict__ dst, const int4* __restrict__ src, size_t n16, int passes)
{
  const size_t per   = (n16 + gridDim.x - 1) / gridDim.x;
  const size_t begin = blockIdx.x * per;
  const size_t end   = begin + per < n16 ? begin + per : n16;
  for (int pass = 0; pass < passes; ++pass) {
    size_t i = begin + threadIdx.x;
    for (; i + 3 * blockDim.x < end; i += 4 * blockDim.x) {
      int4 a = src[i], b = src[i + blockDim.x], c = src[i + 2 * blockDim.x], d = src[i + 3 * blockDim.x];
      dst[i]                  = a;
      dst[i + blockDim.x]     = b;
      dst[i + 2 * blockDim.x] = c;
      dst[i + 3 * blockDim.x] = d;
    }
    for (; i < end; i += blockDim.x)
      dst[i] = src[i];
  }
}

__device__ __forceinline__ float warp_max(float v)
{
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffU, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffU, v, o);
  return v;
}

/** Block-wide reduction of (max, sum of exp relative to max) — online softmax statistics. */
__device__ void block_softmax_stats(float& m, float& s)
{
  __shared__ float sm[32], ss[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  float wm = warp_max(m);
  s        = warp_sum(s * __expf(m - wm));
  if (lane == 0) {
    sm[warp] = wm;
    ss[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    float mm = lane < nwarps ? sm[lane] : -INFINITY;
    float s2 = lane < nwarps ? ss[lane] : 0.0f;
    float bm = warp_max(mm);
    s2       = warp_sum(lane < nwarps ? s2 * __expf(mm - bm) : 0.0f);
    if (lane == 0) {
      sm[0] = bm;
      ss[0] = s2;
    }
  }
  __syncthreads();
  m = sm[0];
  s = ss[0];
}

__global__ void softmax_kernel(__nv_bfloat16* p, int cols, float scale, int causal_rows)
{
  __nv_bfloat16* row = p + static_cast<size_t>(blockIdx.x) * cols;
  const int valid    = causal_rows > 0 ? static_cast<int>(blockIdx.x % causal_rows) + 1 : cols;
  float m = -INFINITY, s = 0.0f;
  for (int i = threadIdx.x; i < valid; i += blockDim.x) {
    float x  = __bfloat162float(row[i]) * scale;
    float nm = fmaxf(m, x);
    s        = s * __expf(m - nm) + __expf(x - nm);
    m        = nm;
  }
  if (m == -INFINITY) // a thread that saw nothing
    m = -1e30f;
  block_softmax_stats(m, s);
  const float inv = 1.0f / s;
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    row[i] = __float2bfloat16(i < valid ? __expf(__bfloat162float(row[i]) * scale - m) * inv : 0.0f);
}

__global__ void rmsnorm_kernel(__nv_bfloat16* y, const __nv_bfloat16* x, const __nv_bfloat16* w, int hidden)
{
  __shared__ float red[32];
  const __nv_bfloat16* xr = x + static_cast<size_t>(blockIdx.x) * hidden;
  __nv_bfloat16* yr       = y + static_cast<size_t>(blockIdx.x) * hidden;
  float ss                = 0.0f;
  for (int i = threadIdx.x * 8; i < hidden; i += blockDim.x * 8) {
    int4 v                 = *reinterpret_cast<const int4*>(xr + i);
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&v);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float f = __bfloat162float(e[j]);
      ss += f * f;
    }
  }
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0)
    red[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float t = threadIdx.x < (blockDim.x >> 5) ? red[threadIdx.x] : 0.0f;
    t       = warp_sum(t);
    if (threadIdx.x == 0)
      red[0] = t;
  }
  __syncthreads();
  const float r = rsqrtf(red[0] / hidden + 1e-6f);
  for (int i = threadIdx.x * 8; i < hidden; i += blockDim.x * 8) {
    int4 v = *reinterpret_cast<const int4*>(xr + i);
    int4 g = *reinterpret_cast<const int4*>(w + i);
    int4 o;
    const __nv_bfloat16* e  = reinterpret_cast<const __nv_bfloat16*>(&v);
    const __nv_bfloat16* ge = reinterpret_cast<const __nv_bfloat16*>(&g);
    __nv_bfloat16* oe       = reinterpret_cast<__nv_bfloat16*>(&o);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      oe[j] = __float2bfloat16(__bfloat162float(e[j]) * r * __bfloat162float(ge[j]));
    *reinterpret_cast<int4*>(yr + i) = o;
  }
}

__global__ void silu_mul_kernel(__nv_bfloat16* y, const __nv_bfloat16* x, int tokens, int hidden)
{
  const size_t vec_per_row = hidden / 8, total = static_cast<size_t>(tokens) * vec_per_row;
  for (size_t v = blockIdx.x * size_t(blockDim.x) + threadIdx.x; v < total; v += size_t(gridDim.x) * blockDim.x) {
    const size_t t = v / vec_per_row, c = (v % vec_per_row) * 8;
    const __nv_bfloat16* xr = x + t * 2 * hidden;
    int4 a = *reinterpret_cast<const int4*>(xr + c), b = *reinterpret_cast<const int4*>(xr + hidden + c), o;
    const __nv_bfloat16 *ae = reinterpret_cast<const __nv_bfloat16*>(&a),
                        *be = reinterpret_cast<const __nv_bfloat16*>(&b);
    __nv_bfloat16* oe       = reinterpret_cast<__nv_bfloat16*>(&o);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float g = __bfloat162float(ae[j]);
      oe[j]   = __float2bfloat16(g / (1.0f + __expf(-g)) * __bfloat162float(be[j]));
    }
    *reinterpret_cast<int4*>(y + t * hidden + c) = o;
  }
}

__global__ void empty() {}

} // namespace

void fill_bf16(void* p, size_t n, uint32_t seed, cudaStream_t s)
{
  fill_bf16_kernel<<<1024, 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed);
  LAUNCH_CHECK();
}

void fill_fp8(void* p, size_t n, uint32_t seed, cudaStream_t s)
{
  fill_fp8_kernel<<<1024, 256, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed);
  LAUNCH_CHECK();
}

/* Opt in to more than 48 KiB of dynamic shared memory; set on every launch that asks for it, because the attribute
 * belongs to the current context (the testbed switches between green contexts). */
static void allow_copy_smem(int smem_bytes)
{
  if (smem_bytes > 0)
    CUDA_CHECK(cudaFuncSetAttribute(copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
}

void copy_ctas(void* dst, const void* src, size_t bytes, int passes, int ctas, int smem_bytes, cudaStream_t s)
{
  allow_copy_smem(smem_bytes);
  copy_kernel<<<ctas, 1024, static_cast<size_t>(smem_bytes), s>>>(static_cast<int4*>(dst),
                                                                  static_cast<const int4*>(src), bytes / 16, passes);
  LAUNCH_CHECK();
}

int copy_ctas_per_sm(int smem_bytes)
{
  allow_copy_smem(smem_bytes);
  int blocks = 0;
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_kernel, 1024, static_cast<size_t>(smem_bytes)));
  return blocks;
}

void softmax_rows(void* p, long rows, int cols, float scale, int causal_rows, cudaStream_t s)
{
  int threads = cols >= 4096 ? 512 : cols >= 1024 ? 256 : 128;
  softmax_kernel<<<static_cast<unsigned>(rows), threads, 0, s>>>(static_cast<__nv_bfloat16*>(p), cols, scale,
                                                                 causal_rows);
  LAUNCH_CHECK();
}

void rmsnorm(void* y, const void* x, const void* w, int tokens, int hidden, cudaStream_t s)
{
  int threads = hidden >= 4096 ? 256 : hidden >= 1024 ? 128 : 64;
  rmsnorm_kernel<<<tokens, threads, 0, s>>>(static_cast<__nv_bfloat16*>(y), static_cast<const __nv_bfloat16*>(x),
                                            static_cast<const __nv_bfloat16*>(w), hidden);
  LAUNCH_CHECK();
}

void silu_mul(void* y, const void* x, int tokens, int hidden, int grid, cudaStream_t s)
{
  size_t vecs = static_cast<size_t>(tokens) * (hidden / 8);
  size_t need = (vecs + 255) / 256;
  unsigned g  = static_cast<unsigned>(need < static_cast<size_t>(grid) ? need : grid);
  silu_mul_kernel<<<g, 256, 0, s>>>(static_cast<__nv_bfloat16*>(y), static_cast<const __nv_bfloat16*>(x), tokens,
                                    hidden);
  LAUNCH_CHECK();
}

void empty_kernel(cudaStream_t s) { empty<<<1, 32, 0, s>>>(); }

} // namespace dbosim::kern

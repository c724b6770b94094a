#include "kernels/CudaBackend.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#if DBO_HAVE_NCCL
#include <nccl.h>
#endif

namespace dbosim::kern {

#if DBO_HAVE_NCCL
namespace {

#define NCCL_CHECK(x)                                                                                                  \
  do {                                                                                                                 \
    ncclResult_t r_ = (x);                                                                                             \
    if (r_ != ncclSuccess)                                                                                             \
      throw std::runtime_error(std::string(#x) + ": " + ncclGetErrorString(r_));                                       \
  } while (0)

/** One communicator per visible GPU, all driven from this thread (ncclCommInitAll). */
struct Clique {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<char*> send, recv;
  size_t bytes = 0;
  explicit Clique(int n) : comms(size_t(n)), streams(size_t(n)), send(size_t(n)), recv(size_t(n))
  {
    setenv("NCCL_NVLS_ENABLE", "0", 0); // never NVLink multicast on these machines
    std::vector<int> devs(static_cast<size_t>(n), 0);
    for (int d = 0; d < n; ++d)
      devs[size_t(d)] = d;
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
    for (int d = 0; d < n; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaStreamCreateWithFlags(&streams[size_t(d)], cudaStreamNonBlocking));
    }
    CUDA_CHECK(cudaSetDevice(0));
  }
  void reserve(size_t b)
  {
    if (b <= bytes)
      return;
    for (size_t d = 0; d < comms.size(); ++d) {
      CUDA_CHECK(cudaSetDevice(static_cast<int>(d)));
      if (send[d])
        CUDA_CHECK(cudaFree(send[d]));
      if (recv[d])
        CUDA_CHECK(cudaFree(recv[d]));
      CUDA_CHECK(cudaMalloc(&send[d], b));
      CUDA_CHECK(cudaMalloc(&recv[d], b));
    }
    CUDA_CHECK(cudaSetDevice(0));
    bytes = b;
  }
  void sync()
  {
    for (size_t d = 0; d < comms.size(); ++d) {
      CUDA_CHECK(cudaSetDevice(static_cast<int>(d)));
      CUDA_CHECK(cudaStreamSynchronize(streams[d]));
    }
    CUDA_CHECK(cudaSetDevice(0));
  }
};

} // namespace

std::string nccl_version()
{
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess)
    return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

calib::Measurement nccl_measure(const calib::MeasureSpec& spec)
{
  calib::Measurement m;
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));
  if (n < 2) {
    m.status = "skipped: NCCL all-to-all and send/recv need >= 2 GPUs; this machine has " + std::to_string(n);
    return m;
  }
  static Clique clique(n);
  const size_t bytes = size_t(spec.params.at("mib")) << 20;
  clique.reserve(bytes);
  const bool a2a    = spec.variant == "alltoall";
  const size_t part = bytes / size_t(n);
  auto once         = [&] {
    NCCL_CHECK(ncclGroupStart());
    for (int d = 0; d < n; ++d) {
      const size_t u = size_t(d);
      if (a2a) {
        for (int peer = 0; peer < n; ++peer) {
          NCCL_CHECK(
                      ncclSend(clique.send[u] + size_t(peer) * part, part, ncclInt8, peer, clique.comms[u], clique.streams[u]));
          NCCL_CHECK(
                      ncclRecv(clique.recv[u] + size_t(peer) * part, part, ncclInt8, peer, clique.comms[u], clique.streams[u]));
        }
      } else if (d == 0) {
        NCCL_CHECK(ncclSend(clique.send[u], bytes, ncclInt8, 1, clique.comms[u], clique.streams[u]));
      } else if (d == 1) {
        NCCL_CHECK(ncclRecv(clique.recv[u], bytes, ncclInt8, 0, clique.comms[u], clique.streams[u]));
      }
    }
    NCCL_CHECK(ncclGroupEnd());
  };
  for (int w = 0; w < 3; ++w)
    once();
  clique.sync();
  std::vector<double> samples;
  for (int r = 0; r < 15; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    once();
    clique.sync();
    samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  calib::summarize_samples(m, samples);
  // bus bandwidth: bytes that cross links per rank per second (nccl-tests convention)
  const double moved    = a2a ? double(bytes) * (n - 1) / n : double(bytes);
  m.extra["busbw_gbps"] = moved / m.us / 1e3;
  m.extra["gpus"]       = n;
  m.info["impl"]        = a2a ? "ncclSend/ncclRecv to every peer in one group, one process driving all GPUs"
                              : "ncclSend GPU0 -> ncclRecv GPU1";
  return m;
}

#else

std::string nccl_version() { return "not built (no nccl.h)"; }

calib::Measurement nccl_measure(const calib::MeasureSpec&)
{
  calib::Measurement m;
  int n = 0;
  cudaGetDeviceCount(&n);
  m.status = n < 2 ? "skipped: NCCL all-to-all and send/recv need >= 2 GPUs; this machine has " + std::to_string(n)
                   : "skipped: built without NCCL";
  return m;
}

#endif

} // namespace dbosim::kern

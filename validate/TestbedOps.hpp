/* dbosim validate — an external testbed: a documented op list (validate/README.md, "External testbeds") that anyone's
 * two-stream microbenchmark can be written in. A hardware profile name and ops in host issue order, each with its
 * stream, micro-batch, the ops it waits on and one kernel of the catalog (GEMM, strided-batched GEMM, grouped GEMM,
 * the SM-resident copy kernel, an all-to-all collective); optionally a green-context partition and the world size
 * (the list is one rank's program when it is above 1). Read strictly into plain data. */
#pragma once
#include "hw/DType.hpp"
#include "sim/plan/Op.hpp"

#include <string>
#include <vector>

namespace dbosim::validate {

/** @brief The catalog's kernel kinds; all_to_all is a collective among `ranks` (dispatch or combine). */
enum class TestbedKernelKind { gemm, batched_gemm, grouped_gemm, copy, all_to_all };

/** @brief "gemm", "batched_gemm", "grouped_gemm", "copy", "all_to_all". */
const char* testbed_kernel_kind_name(TestbedKernelKind k);

/** @brief One kernel launch and its shape. GEMMs: [m x k] x [k x n] per matrix (batched: `batch` independent
 *  matrices; grouped: `batch` groups of m rows each with its own weights). copy: the SM-resident copy kernel. */
struct TestbedKernel {
  TestbedKernelKind kind = TestbedKernelKind::gemm;
  int batch              = 1; ///< batched_gemm: batch; grouped_gemm: groups; gemm and copy: 1
  int m                  = 0;
  int n                  = 0;
  int k                  = 0;
  models::DType dtype    = models::DType::bf16;
  double bytes           = 0;      ///< copy: bytes moved
  int ctas               = 0;      ///< copy: CTAs (one per SM it holds)
  int smem_bytes_per_cta = 0;      ///< copy: dynamic shared memory each CTA reserves (B)
  int smem_line = 0, smem_col = 0; ///< copy: where smem_bytes_per_cta's value is (1-based; 0: not given)
  double recv_bytes = 0;           ///< all_to_all: bytes this rank receives (`bytes`: the bytes it sends)
  std::vector<int> ranks;          ///< all_to_all: the participating ranks (distinct, each < the list's world_size)
};

struct TestbedOp {
  std::string name;
  sim::StreamId stream = sim::StreamId::compute;
  int ubatch           = 0;    ///< the micro-batch (host thread) that issues it
  std::vector<int> depends_on; ///< indices of earlier ops it waits for
  TestbedKernel kernel;
  int line = 0; ///< 1-based line of the op in its file (for errors found after parsing)
};

struct TestbedOps {
  std::string file;
  std::string name;                  ///< the testbed's name (default: the file's stem)
  std::string profile;               ///< hardware profile name or path
  int world_size            = 1;     ///< ranks running this op list (SPMD: every rank issues the same ops)
  int partition_compute_sms = 0;     ///< green-context partition: SMs of the compute side (0 = no partition)
  int partition_comm_sms    = 0;     ///< and of the comm side
  bool comm_high_priority   = false; ///< comm stream at the greatest priority (executed; the engine has no priority)
  std::vector<TestbedOp> ops;        ///< in host issue order
  int num_ubatches() const;
};

/** @brief Reads an op-list file. Strict: unknown keys, out-of-range values, duplicate op names, a dependency on an
 *  unknown op, a cycle, or a dependency on an op listed later (ops are in host issue order, and a CUDA event wait on
 *  an event not yet recorded does not wait) are InputErrors naming the file, line and key. */
TestbedOps load_testbed_ops(const std::string& path);

/** @brief The op list as the YAML text load_testbed_ops reads (one op per line). */
std::string testbed_ops_yaml(const TestbedOps& t, const std::string& header_comment);

} // namespace dbosim::validate

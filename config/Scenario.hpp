/* dbosim — a validated scenario: what to simulate. Filled by config/ScenarioLoader from scenarios/<name>.yaml. */
#pragma once
#include "models/ExpertRouting.hpp"
#include "models/HwProfile.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"

#include <cstdint>
#include <string>

namespace dbosim {

enum class CudaGraphMode { full, piecewise, none };

struct ClusterConfig {
  int nodes         = 1;
  int gpus_per_node = 8;
  std::string network;             ///< network facts (hwprofiles/network/<name>.yaml); empty = the profile's name
  double oversubscription = 1.0;   ///< fat tree: leaf down-link over up-link bandwidth (1 = non-blocking)
  models::RoutingSpec routing;     ///< expert routing and placement (seed copied from Scenario::seed)
  std::string routing_histogram;   ///< the file the histogram weights came from (RoutingDist::histogram)
};

struct WorkloadConfig {
  models::Phase phase   = models::Phase::decode;
  int tokens_per_rank   = 0; ///< new tokens on each DP rank this step
  int context_len       = 0; ///< KV length per request (decode) / prompt length (prefill)
  int batch             = 0; ///< requests per DP rank
};

/** @brief vLLM's DBO and async-combine knobs, same names and defaults. */
struct OverlapConfig {
  bool enable_dbo                = false;
  int ubatch_size                = 0;   ///< >1 enables DBO with that many micro-batches (vLLM --ubatch-size)
  int dbo_decode_token_threshold = 32;
  int dbo_prefill_token_threshold = 512;
  int dbo_comm_sms               = 20;  ///< VLLM_DBO_COMM_SMS
  bool async_combine             = false; ///< all2all_backend lives in ParallelSpec::backend
  /** @brief vLLM's use_ubatching: enable_dbo or ubatch_size > 1. */
  bool dbo_enabled() const { return enable_dbo || ubatch_size > 1; }
  /** @brief vLLM's num_ubatches: 2 under enable_dbo, else ubatch_size (1 when DBO is off). */
  int num_ubatches() const { return enable_dbo ? 2 : (ubatch_size > 1 ? ubatch_size : 1); }
};

struct ExecutionConfig {
  CudaGraphMode cuda_graph  = CudaGraphMode::full;
  bool host_sync_after_comm = false; ///< ROCm DeepEP high-throughput quirk: host synchronize after D and C
};

struct Scenario {
  std::string file;        ///< the YAML it came from
  std::string name;        ///< file stem unless `name:` is given
  models::ModelSpec model;
  models::HwProfile hw;
  ClusterConfig cluster;
  models::ParallelSpec parallel;
  WorkloadConfig workload;
  OverlapConfig overlap;
  ExecutionConfig execution;
  std::uint64_t seed = 0;
};

} // namespace dbosim

/* dbosim — a validated scenario: what to simulate. Filled by config/ScenarioLoader from scenarios/<name>.yaml. */
#pragma once
#include "config/KvAdmission.hpp"
#include "config/ScheduleTable.hpp"
#include "hw/HwProfile.hpp"
#include "hw/NetworkFacts.hpp"
#include "models/ExpertImbalance.hpp"
#include "models/ExpertRouting.hpp"
#include "models/ModelSpec.hpp"
#include "models/OpCost.hpp"
#include "models/SpecDecode.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace dbosim {

struct ServingEngine; // config/EngineTable.hpp

enum class CudaGraphMode { full, piecewise, none };

/** cluster.expert_load as written: `automatic` follows EPLB (cluster.placement), the others name the model. */
enum class ExpertLoadSetting { automatic, eplb_residual, no_eplb, ideal };

struct ClusterConfig {
  int nodes         = 1;
  int gpus_per_node = 8;
  std::string network;           ///< network facts (hwprofiles/network/<name>.yaml); empty = the profile's name
  double oversubscription = 1.0; ///< fat tree: leaf down-link over up-link bandwidth (1 = non-blocking)
  models::RoutingSpec routing;   ///< expert routing and placement (seed copied from Deployment::seed)
  std::string routing_histogram; ///< the file the histogram weights came from (RoutingDist::histogram)
  /** How routed tokens spread over the EP ranks in a step priced for one rank (run, serving, sweep, plan; the cluster
   *  path draws its routing instead): expert_load_model() resolves it. */
  ExpertLoadSetting expert_load = ExpertLoadSetting::automatic;
};

/** @brief The expert load a step of `c` is priced with: the post-EPLB residual under placement eplb, the measured
 *  no-EPLB imbalance under contiguous placement (vLLM without --enable-eplb), or the setting's model. */
models::ExpertLoadModel expert_load_model(const ClusterConfig& c);

/** @brief vLLM's DBO and async-combine knobs, same names and defaults. */
struct OverlapConfig {
  bool enable_dbo                 = false;
  int ubatch_size                 = 0; ///< >1 enables DBO with that many micro-batches (vLLM --ubatch-size)
  int dbo_decode_token_threshold  = 32;
  int dbo_prefill_token_threshold = 512;
  int dbo_comm_sms                = models::vllm_dbo_comm_sms; ///< VLLM_DBO_COMM_SMS
  bool async_combine              = false;                     ///< all2all_backend lives in ParallelSpec::backend
  /** overlap.schedule: a config/ScheduleTable row, run by the steps with its micro-batch count; unset: the engine's
   *  default schedule (config/EngineTable.hpp) for the steps with its micro-batch count, else vLLM's rules (dbo for a
   *  split step, else async_combine or serial). */
  std::optional<sim::ScheduleId> schedule{};
  /** @brief vLLM's use_ubatching: enable_dbo or ubatch_size > 1. */
  bool dbo_enabled() const { return enable_dbo || ubatch_size > 1; }
  /** @brief vLLM's num_ubatches: 2 under enable_dbo, else ubatch_size (1 when DBO is off). */
  int num_ubatches() const { return enable_dbo ? 2 : (ubatch_size > 1 ? ubatch_size : 1); }
  /** @brief The tokens a batch needs to be split (vLLM's check_ubatch_thresholds): a uniform decode batch the decode
   *  threshold, any other the prefill one. */
  int dbo_token_threshold(bool uniform_decode) const
  {
    return uniform_decode ? dbo_decode_token_threshold : dbo_prefill_token_threshold;
  }
  bool operator==(const OverlapConfig&) const = default;
};

struct ExecutionConfig {
  CudaGraphMode cuda_graph  = CudaGraphMode::full;
  bool host_sync_after_comm = false; ///< ROCm DeepEP high-throughput quirk: host synchronize after D and C
  int moe_dp_chunk_tokens   = 0;     ///< vLLM's VLLM_MOE_DP_CHUNK_SIZE (0: the engine row's; models/CommSetup.hpp)
  bool operator==(const ExecutionConfig&) const = default;
};

/** @brief A serving workload, named as `vllm bench serve` names its options (workload.* keys). num_prompts 0 keeps
 *  the single-step `dbosim run`. */
/** Most requests one serving run may hold: each keeps its record, latencies and a requests.csv row in memory. */
inline constexpr int max_serving_requests = 1000000;
/** Most output tokens one serving run may produce: the run's time grows with them (its memory with its steps and
 *  requests: serving/TokenTimes.hpp); the bound is where it was measured (docs/model.md). */
inline constexpr double max_serving_output_tokens = 134217728.0;

struct RequestWorkload {
  int num_prompts           = 0;    ///< requests to send; 0: no serving run
  int max_concurrency       = 0;    ///< client-side cap on requests in flight; 0: unlimited
  double request_rate       = 0;    ///< requests/s; 0: all at t = 0 (vLLM's inf)
  double burstiness         = 1;    ///< gamma shape of inter-arrival times (1 = Poisson)
  int random_input_len      = 1024; ///< prompt tokens (centre of the uniform range)
  int random_prefix_len     = 0;    ///< tokens before each prompt's random part, the same for every request
  int random_output_len     = 128;  ///< output tokens (centre of the uniform range)
  double random_range_ratio = 0;    ///< lengths uniform in [len (1 - r), len (1 + r)]
  std::string trace;                ///< CSV trace (arrival_s,input_len,output_len); overrides the random draws
  bool operator==(const RequestWorkload&) const = default;
};

/** @brief vLLM V1 scheduler and KV-cache knobs (scheduler.* keys), same names and defaults where vLLM has them. */
struct SchedulerConfig {
  int max_num_seqs              = 256;
  int max_num_batched_tokens    = 8192;
  bool enable_chunked_prefill   = true;
  bool enable_prefix_caching    = true; ///< vLLM V1's automatic prefix caching (on by default)
  bool async_scheduling         = false;
  bool dp_least_loaded          = false; ///< assign requests to DP ranks least-loaded instead of round-robin
  double gpu_memory_utilization = 0.9;
  int block_size                = 16;                          ///< KV-cache block size (tokens)
  int num_gpu_blocks_override   = 0;                           ///< > 0: KV blocks per DP rank instead of the HBM budget
  double scheduler_cpu_us       = 0;                           ///< measured host time of one scheduler step (0: none)
  KvAdmission kv_admission      = KvAdmission::engine_default; ///< admission against the KV cache (auto: the engine's)
  bool disaggregated_prefill =
      false; ///< a prefill and a decode deployment (each the scenario's layout), KV over the NIC
  bool operator==(const SchedulerConfig&) const = default;
};

/** @brief The serving simulation's own knobs (serving.* keys): step-time cache buckets and outputs. */
struct ServingOptions {
  int context_buckets_per_octave = 4;    ///< KV-length buckets per power of two (geometric grid)
  int token_buckets_per_octave   = 8;    ///< step-token buckets per power of two above 512 (below: vLLM graph sizes)
  int exact_samples              = 8;    ///< shapes simulated unbucketed to measure the cache's bucket error
  bool step_trace                = true; ///< write steps.csv
  bool operator==(const ServingOptions&) const = default;
};

/** @brief The precision.* keys as written (docs/dimensions.md); unset: the model's. Applied to Scenario::model on load
 *  (config/PrecisionParams.cpp). */
struct PrecisionConfig {
  models::OpPrecision ops;                     ///< attention, routed_experts, shared_experts, dense_mlp, lm_head
  std::optional<models::DType> kv_cache_dtype; ///< bf16 | fp8; unset: auto (the model's)
  std::optional<models::DType> dispatch_dtype; ///< bf16 | fp8 | fp4 (nvfp4); unset: the model's
  std::optional<models::DType> combine_dtype;  ///< bf16 | fp8 | fp4 (nvfp4); unset: the model's
};

/** @brief What a step needs: the model on its hardware, laid out and run as the scenario says (the parts of a
 *  Scenario a step plan, its costs and its draft read). A step's shape (models::StepShape) is given beside it, so
 *  one deployment prices any shape; the serving workload that chooses the shapes is the Scenario's. */
struct Deployment {
  std::string file; ///< the YAML it came from (errors name it)
  models::ModelSpec model;
  models::HwProfile hw;
  /** engine: a row of config/EngineTable.hpp (engine_row() reads it; null, in a scenario built in code: the default
   *  row). A pointer, so that the table is not included by every user of the scenario. */
  const ServingEngine* engine = nullptr;
  models::NetworkFacts network; ///< link facts for D/C (cluster.network, else the profile's name); empty when ep = 1
  ClusterConfig cluster;
  models::ParallelSpec parallel;
  OverlapConfig overlap;
  ExecutionConfig execution;
  models::SpecDecodeSpec speculative; ///< speculative_config.* (vLLM --speculative-config); method none = off
  std::uint64_t seed = 0;
};

/** @brief A validated scenario: its deployment, the single step `dbosim run` prices, and the serving workload. */
struct Scenario : Deployment {
  std::string name; ///< file stem unless `name:` is given
  /** The single step (workload.phase, tokens_per_rank, context_len, batch): `tokens` is workload.tokens_per_rank,
   *  the new tokens on each DP rank. */
  models::StepShape step;
  RequestWorkload requests;
  SchedulerConfig scheduler;
  ServingOptions serving;
  PrecisionConfig precision; ///< precision.* as written; `model` holds them applied
  int sweep_axes = 0;        ///< axes of the `sweep:` section (run by `dbosim sweep`; ignored by `dbosim run`)
  /** The scenario's text without what only the request stream reads (workload.num_prompts, max_concurrency, the
   *  random lengths and rate, trace; serving.step_trace, exact_samples) nor its name and sweep: two scenarios with the
   *  same fingerprint run the same step at every step shape, so a sweep or a plan simulates each shape once across
   *  its points. Empty (no sharing) for a scenario not read from a file. */
  std::string step_fingerprint;
};

} // namespace dbosim

/* dbosim — a serving run: the client (arrivals, max_concurrency), DP ranks each with a vLLM V1 scheduler stepping in
 * lockstep (DP padding: every rank runs the largest rank's token count), each step's time from the step-time cache
 * over a StepTimeOracle, plus the host's per-step gap.
 *
 * Distinct shapes are simulated in batches: a pass runs the whole workload, guessing a missing shape's time from the
 * nearest cached one and collecting the misses; the misses are simulated together (in parallel) and the run is
 * repeated until a pass has no miss, so every reported figure comes from simulated shapes only. After
 * `max_guess_passes`, a last pass simulates each miss where it occurs. An oracle that does not simulate in parallel
 * (StepTimeOracle::batches_in_parallel: the in-process replay) gets that pass alone. */
#pragma once
#include "config/Scenario.hpp"
#include "serving/KvCapacity.hpp"
#include "serving/RankScheduler.hpp"
#include "serving/StepCache.hpp"
#include "serving/StepTimeOracle.hpp"
#include "serving/Workload.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace dbosim::serving {

struct StepRecord {
  double start_s     = 0;
  double step_us     = 0;           ///< the engine's step time for the bucketed shape
  double host_gap_us = 0;           ///< the host's part of the step (sync and scheduling), 0 when hidden by async
  const char* pool   = "colocated"; ///< colocated, or the prefill / decode deployment when disaggregated
  StepKey exact; ///< the shape as scheduled: the slowest rank's (padded tokens, its batch, mean context)
  StepKey bucketed;
  int critical_rank        = 0; ///< the rank with the most own work (RankWork): the one every collective waits for
  double attention_spin_us = 0; ///< the largest spin of a rank with requests: the critical rank's work minus its own
  double expert_spin_us    = 0; ///< a mean-load rank's wait for the busiest EP rank's MoE work (StepTime)
  double hot_rank_load     = 1; ///< the busiest EP rank's expert load over the mean (StepTime)
  int running              = 0; ///< requests running on all ranks after scheduling
  int waiting              = 0; ///< requests waiting on all ranks
  long kv_blocks_used      = 0; ///< on the fullest rank
  int preempted            = 0;
  int total_tokens         = 0; ///< over all ranks
  int ubatches             = 1;
  bool cuda_graph          = false;
};

struct ServingParams {
  int dp   = 1;
  int gpus = 1; ///< all deployments
  SchedulerConfig scheduler;
  long kv_blocks_per_rank            = 0;
  double host_gap_us                 = 0;     ///< the host's gap between steps without async scheduling
  bool disaggregated                 = false; ///< a prefill and a decode deployment, the KV cache moved between them
  double kv_transfer_bytes_per_token = 0;     ///< KV bytes of one token on one GPU
  double kv_transfer_bytes_per_s     = 0;     ///< the NIC, per GPU
  double kv_transfer_latency_s       = 0;
  bool graph_decode                  = true; ///< uniform decode steps replay full CUDA graphs (padded to capture sizes)
  OverlapConfig overlap;                     ///< the scenario's: whether and when DBO splits a step
  models::SpecDecodeSpec speculative;        ///< decoding requests run 1 + k tokens; acceptance drawn per draft
  std::uint64_t seed = 0;                    ///< the scenario's seed (acceptance draws)
  Buckets buckets;
  int max_guess_passes = 6;
  std::string file     = "scenario"; ///< the scenario file, for errors
  bool per_rank_work   = true; ///< price each rank's own work (RankWork) and wait for the slowest; false: the busiest
                               ///< rank by tokens sets the step (the shape before stragglers were modelled)
  /** Called now and then with (pass, requests finished, requests) while a run goes; empty: silent. */
  std::function<void(int, std::size_t, std::size_t)> on_progress;
};

struct ServingResult {
  std::vector<Request> requests;
  std::vector<LiveRequest> live; ///< by request id
  std::vector<StepRecord> steps;
  StepClock clock; ///< each deployment's step ends: the live requests' token times (LiveRequest::tokens) index it
  long preemptions           = 0;
  long peak_kv_blocks        = 0; ///< on the fullest rank
  long prefix_queried_tokens = 0; ///< RankScheduler::prefix_queried_tokens over every rank
  long prefix_hit_tokens     = 0; ///< RankScheduler::prefix_hit_tokens over every rank
  int passes                 = 0;
  long simulated_shapes      = 0;
};

/** @brief The host gap between steps: the profile's stream synchronize (reading the sampled tokens back) plus the
 *  measured scheduler time; under async scheduling both overlap the GPU step. */
double host_gap_us(const Scenario& s);
/** @brief The run's parameters from a scenario (KV capacity from kv_capacity()). */
ServingParams serving_params(const Scenario& s, const KvCapacity& kv);

/** @brief Runs `requests` to completion. `cache` is filled through `oracle`. */
ServingResult run_serving(const ServingParams& p, std::vector<Request> requests, int max_concurrency,
                          StepTimeOracle& oracle, StepCache& cache);

} // namespace dbosim::serving

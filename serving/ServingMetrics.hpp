/* dbosim — a serving run's figures, named as `vllm bench serve` names them (TTFT, TPOT, ITL, E2E latency in ms:
 * mean, median, std, p90, p99; request, output and total token throughput), plus tokens/s per GPU and per user,
 * the per-request CSV and the step-level trace. */
#pragma once
#include "serving/ServingSim.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dbosim::serving {

/** @brief numpy.percentile's default (linear interpolation between closest ranks); 0 for an empty list. */
double percentile(std::vector<double> v, double pct);
/** @brief The same of a list already sorted ascending (several percentiles of one list sort it once). */
double percentile_of_sorted(const std::vector<double>& v, double pct);

/** @brief Every inter-token gap of a run in ms, without a list of them: their mean and std (summed gap by gap in
 *  request order, the arithmetic of the same statistics over the list) and their weighted multiset (the exact
 *  percentiles of the list). Memory grows with the run's steps and requests, not with its tokens. */
struct GapStats {
  WeightedSample ms;
  double mean_ms = 0;
  double std_ms  = 0;
};

/** @brief A run's gaps between consecutive streamed chunks (ITL) of every request. */
GapStats itl_stats(const ServingResult& r);

/** @brief One request's gaps (seconds, in time order): a list as long as its output, for tests and small runs. */
std::vector<double> itl_gaps_s(const LiveRequest& l, const StepClock& clock);

/** @brief A run's per-request samples as `vllm bench serve` collects them (seconds): TTFT and E2E latency of every
 *  request, TPOT of every request with more than one output token, every inter-token gap (ITL, as GapStats), and the
 *  totals. */
struct ServingSamples {
  std::vector<double> ttft_s, tpot_s, e2el_s;
  GapStats itl;
  long completed          = 0;
  long total_input_tokens = 0, total_output_tokens = 0;
  double duration_s = 0; ///< first send to last finish
};

/** @brief The samples of `r` (the figures below are their statistics). */
ServingSamples serving_samples(const ServingResult& r);

/** @brief The serving block of summary.json (vLLM key names; times in ms, throughputs per second). */
nlohmann::ordered_json serving_metrics(const ServingResult& r, int gpus);

/** @brief The mean ITL by cause (ms per gap, over every gap of every request): layers, step_work (models/StepWork and
 *  the host gap), straggler_spin (attention_spin + expert_spin), draft, other; they sum to mean_itl_ms. */
nlohmann::ordered_json itl_split(const ServingResult& r);

/** @brief Time-averaged requests in the system (sent, not finished) over the run, from the per-request times. */
double mean_requests_in_system(const ServingResult& r);

/** @brief requests.csv: id,rank,send_s,input_len,output_len,ttft_ms,tpot_ms,e2el_ms,preemptions. */
std::string requests_csv(const ServingResult& r);
/** @brief steps.csv: one row per step (start, time, host gap, exact and bucketed shape, queue, KV, DBO, graph). */
std::string steps_csv(const ServingResult& r);
/** @brief The printed table of a serving run. */
std::string serving_text(const nlohmann::ordered_json& metrics);

} // namespace dbosim::serving

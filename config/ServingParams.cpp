/* dbosim — the serving keys: the request workload (named as `vllm bench serve` names its options), the vLLM V1
 * scheduler and KV cache (named as vLLM's engine arguments), the step-time cache, and the `sweep:` section. */
#include "base/InputError.hpp"
#include "config/ParamHelpers.hpp"
#include "config/SweepAxes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace dbosim {
namespace {
using params::bool_param;
using params::double_param;
using params::enum_param;
using params::int_param;

/** @brief `sweep:` maps a dotted key (or comma-joined keys, zipped) to a non-empty list of values. The values are
 *  applied by `dbosim sweep` to a copy of the file; here only the shape is checked. */
void read_sweep(YamlMap& root, const std::string& leaf, Scenario& s)
{
  s.sweep_axes = static_cast<int>(parse_sweep_axes(root, leaf).size());
}
} // namespace

void add_serving_params(std::vector<ParamDecl>& p)
{
  /*** workload: vllm bench serve's options ***/
  p.push_back(int_param(
      "workload.num_prompts", "requests", 0, 0, max_serving_requests,
      "Requests of a serving run (vllm bench serve --num-prompts); 0: one step, no serving run. A run keeps every "
      "request's record, and its token times as runs of steps (memory grows with steps and requests, not output "
      "tokens): at the bound, 10^6 prompts of 16 output tokens took 6.5 s CPU and 0.51 GB, of 128 (near the 2^27 "
      "output-token bound) 11 s CPU and 0.53 GB (docs/model.md)",
      [](Scenario & s) -> auto& { return s.requests.num_prompts; }));
  p.push_back(int_param(
      "workload.max_concurrency", "requests", 0, 0, 1000000,
      "Requests in flight at most (--max-concurrency); 0: unlimited. A serving run takes at least its expected output "
      "tokens / (requests running at once x tokens a step) steps, bounded at 2^20 (exit 2 beyond: each step costs "
      "~0.06 ms of CPU and a steps.csv row, docs/model.md)",
      [](Scenario & s) -> auto& { return s.requests.max_concurrency; }));
  p.push_back(double_param(
      "workload.request_rate", "req/s", 0.0, 0.0, 1e9,
      "Arrival rate (--request-rate); 0: every request at t = 0 (vLLM's inf)",
      [](Scenario & s) -> auto& { return s.requests.request_rate; }));
  p.push_back(double_param(
      "workload.burstiness", "", 1.0, 1e-3, 1e3, "Gamma shape of inter-arrival times (--burstiness); 1 = Poisson",
      [](Scenario & s) -> auto& { return s.requests.burstiness; }));
  p.push_back(int_param(
      "workload.random_input_len", "tokens", 1024, 1, 1 << 20, "Prompt length (--random-input-len)",
      [](Scenario & s) -> auto& { return s.requests.random_input_len; }));
  p.push_back(int_param(
      "workload.random_prefix_len", "tokens", 0, 0, 1 << 20,
      "Tokens every prompt starts with, before its random part (--random-prefix-len): a prefix-cache hit",
      [](Scenario & s) -> auto& { return s.requests.random_prefix_len; }));
  p.push_back(int_param(
      "workload.random_output_len", "tokens", 128, 1, 1 << 20, "Output length (--random-output-len)",
      [](Scenario & s) -> auto& { return s.requests.random_output_len; }));
  p.push_back(double_param(
      "workload.random_range_ratio", "", 0.0, 0.0, 0.999,
      "Lengths uniform in [len (1 - r), len (1 + r)] (--random-range-ratio)",
      [](Scenario & s) -> auto& { return s.requests.random_range_ratio; }));
  p.push_back({"workload.trace", "string", "", "none", "a CSV file: arrival_s,input_len,output_len",
               "Request trace replacing the random arrivals and lengths (relative to the scenario's folder)",
               [](Scenario& s) { s.requests.trace.clear(); },
               [](YamlMap& m, const std::string& leaf, Scenario& s) {
                 const std::filesystem::path path = m.get_string(leaf);
                 s.requests.trace =
                     path.is_absolute()
                         ? path.string()
                         : (std::filesystem::path(m.file()).parent_path() / path).lexically_normal().string();
               }});

  /*** scheduler: vLLM V1 engine arguments ***/
  p.push_back(int_param(
      "scheduler.max_num_seqs", "requests", 256, 1, 1 << 20, "Running requests per DP rank at most",
      [](Scenario & s) -> auto& { return s.scheduler.max_num_seqs; }));
  p.push_back(int_param(
      "scheduler.max_num_batched_tokens", "tokens", 8192, 1, 1 << 24, "Token budget of one step per DP rank",
      [](Scenario & s) -> auto& { return s.scheduler.max_num_batched_tokens; }));
  p.push_back(bool_param(
      "scheduler.enable_chunked_prefill", true, "Split long prompts across steps",
      [](Scenario & s) -> auto& { return s.scheduler.enable_chunked_prefill; }));
  p.push_back(bool_param(
      "scheduler.enable_prefix_caching", true,
      "Automatic prefix caching: a prompt's leading whole KV blocks already on its DP rank are not computed again",
      [](Scenario & s) -> auto& { return s.scheduler.enable_prefix_caching; }));
  p.push_back(bool_param(
      "scheduler.async_scheduling", false,
      "Schedule step n+1 while step n runs (hides the host's per-step work behind the GPU)",
      [](Scenario & s) -> auto& { return s.scheduler.async_scheduling; }));
  p.push_back(bool_param(
      "scheduler.dp_least_loaded", false,
      "Send each request to the DP rank with the fewest requests (else round-robin)",
      [](Scenario & s) -> auto& { return s.scheduler.dp_least_loaded; }));
  p.push_back(double_param(
      "scheduler.gpu_memory_utilization", "", 0.9, 0.05, 1.0,
      "Fraction of HBM vLLM may use (weights + activations + KV cache)",
      [](Scenario & s) -> auto& { return s.scheduler.gpu_memory_utilization; }));
  p.push_back(int_param(
      "scheduler.block_size", "tokens", 16, 1, 4096, "KV-cache block size",
      [](Scenario & s) -> auto& { return s.scheduler.block_size; }));
  p.push_back(int_param(
      "scheduler.num_gpu_blocks_override", "blocks", 0, 0, 1 << 30,
      "KV blocks per DP rank instead of the HBM budget (vLLM --num-gpu-blocks-override); 0: from HBM",
      [](Scenario & s) -> auto& { return s.scheduler.num_gpu_blocks_override; }));
  p.push_back(double_param(
      "scheduler.scheduler_cpu_us", "us", 0.0, 0.0, 1e6,
      "Measured host time of one scheduler step, added to each step (hidden under async)",
      [](Scenario & s) -> auto& { return s.scheduler.scheduler_cpu_us; }));
  p.push_back(enum_param<KvAdmission>(
      "scheduler.kv_admission",
      {{"auto", KvAdmission::engine_default}, {"preempt", KvAdmission::preempt}, {"reserve", KvAdmission::reserve}},
      KvAdmission::engine_default,
      "Admission against the KV cache: preempt (admit on the prompt's blocks, preempt by recompute: vLLM), reserve "
      "(admit only when prompt and output fit, never preempt: TensorRT-LLM's GUARANTEED_NO_EVICT); auto: the "
      "engine's",
      [](Scenario & s) -> auto& { return s.scheduler.kv_admission; }));

  p.push_back(bool_param(
      "scheduler.disaggregated_prefill", false,
      "Disaggregated prefill/decode: a prefill and a decode deployment, each with this layout (twice "
      "the GPUs); the prompt's KV moves over the profile's NIC",
      [](Scenario & s) -> auto& { return s.scheduler.disaggregated_prefill; }));

  /*** serving: the step-time cache and outputs ***/
  p.push_back(int_param(
      "serving.context_buckets_per_octave", "buckets", 4, 1, 64,
      "KV-length buckets of the step-time cache per power of two",
      [](Scenario & s) -> auto& { return s.serving.context_buckets_per_octave; }));
  p.push_back(int_param(
      "serving.token_buckets_per_octave", "buckets", 8, 1, 64,
      "Step-token buckets per power of two above 512 tokens (below: vLLM's CUDA-graph sizes)",
      [](Scenario & s) -> auto& { return s.serving.token_buckets_per_octave; }));
  p.push_back(int_param(
      "serving.exact_samples", "shapes", 8, 0, 1000,
      "Step shapes also simulated unbucketed to measure the cache's bucket error",
      [](Scenario & s) -> auto& { return s.serving.exact_samples; }));
  p.push_back(bool_param(
      "serving.step_trace", true, "Write steps.csv (one row per simulated step)",
      [](Scenario & s) -> auto& { return s.serving.step_trace; }));

  p.push_back({"sweep", "sweep", "", "none", "{key: [values], \"k1,k2\": [[a1, a2], ...]}",
               "Sweep axes for `dbosim sweep` (cartesian product, first axis slowest)",
               [](Scenario& s) { s.sweep_axes = 0; }, read_sweep});
}

} // namespace dbosim

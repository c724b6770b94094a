/* dbosim — one DP rank's vLLM V1 scheduler: continuous batching under a token budget (max_num_batched_tokens) and a
 * request cap (max_num_seqs), chunked prefill, paged KV blocks, preemption by recompute when blocks run out
 * (the last running request goes back to the front of the waiting queue and loses its KV) or, under
 * scheduler.kv_admission reserve (TensorRT-LLM's GUARANTEED_NO_EVICT), admission only when a request's whole KV
 * fits (it never needs preempting), and automatic prefix
 * caching of the prefix every request shares (Request::prefix_len): once a request on the rank has computed its
 * whole blocks, they stay and later requests start past them. */
#pragma once
#include "config/Scenario.hpp"
#include "models/SpecDecode.hpp"
#include "serving/TokenTimes.hpp"
#include "serving/Workload.hpp"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace dbosim::serving {

/** @brief Where a stretch of a rank's time went (seconds), summed step by step: the layers (the slowest rank's
 *  layers less the attention this rank did not have to do), the work outside them (models/StepWork plus the host's
 *  gap), the spin in the collectives waiting for the slowest rank's attention and step work, and for the busiest
 *  EP rank's expert load, and the draft module (MTP). */
struct ItlSplit {
  double layers_s         = 0;
  double step_work_s      = 0;
  double attention_spin_s = 0;
  double expert_spin_s    = 0;
  double draft_s          = 0;
  double total_s() const { return layers_s + step_work_s + attention_spin_s + expert_spin_s + draft_s; }
  ItlSplit& operator+=(const ItlSplit& o)
  {
    layers_s += o.layers_s;
    step_work_s += o.step_work_s;
    attention_spin_s += o.attention_spin_s;
    expert_spin_s += o.expert_spin_s;
    draft_s += o.draft_s;
    return *this;
  }
  ItlSplit operator-(const ItlSplit& o) const
  {
    return {layers_s - o.layers_s, step_work_s - o.step_work_s, attention_spin_s - o.attention_spin_s,
            expert_spin_s - o.expert_spin_s, draft_s - o.draft_s};
  }
};

/** @brief A request inside the engine. num_tokens = prompt + tokens generated so far (vLLM's num_tokens). */
struct LiveRequest {
  const Request* req   = nullptr;
  int rank             = 0;
  double send_s        = 0; ///< the client sent it (after the max_concurrency cap)
  int computed         = 0; ///< tokens with their KV in the cache (vLLM num_computed_tokens)
  int generated        = 0; ///< output tokens emitted
  long blocks          = 0; ///< KV blocks held (its own)
  long shared_blocks   = 0; ///< the rank's cached prefix blocks it reads instead of computing (not its own)
  int preemptions      = 0;
  double first_token_s = -1;
  double last_token_s  = -1;
  double finish_s      = -1;
  TokenTimes tokens;   ///< when each chunk of output tokens streamed (its gaps are the ITL samples)
  ItlSplit itl_split;  ///< the gaps' time by cause, summed over the gaps (ServingSim)
  ItlSplit split_mark; ///< its rank's running ItlSplit when its last token came (or it joined the rank)
  int num_tokens() const { return req->input_len + generated; }
  /** @brief Past its first token with every token but the last sampled one in the cache: it decodes next. */
  bool decoding() const { return generated > 0 && num_tokens() - computed == 1; }
};

/** @brief The KV a request holds at its longest: prompt, every output token, and the drafts verified with its last
 *  token (speculative decoding). */
inline int lifetime_tokens(const Request& r, const models::SpecDecodeSpec& spec)
{
  return r.input_len + r.output_len + spec.tokens_per_request() - 1;
}

/** @brief What one rank runs in one step. */
struct RankStep {
  std::vector<LiveRequest*> scheduled;
  std::vector<int> num_new; ///< new tokens of each scheduled request
  int tokens       = 0;
  bool all_decode  = true; ///< every scheduled request decodes (1 + k tokens each): a uniform decode batch
  long context_sum = 0;    ///< sum of KV lengths after the step
  /** Of the above, the requests that decode (1 + k new tokens over a computed prefix: the engines' decode attention
   *  path, vLLM's split_decodes_and_prefills), their tokens and KV lengths. */
  int decode_batch        = 0;
  int decode_tokens       = 0;
  long decode_context_sum = 0;
  int preempted           = 0;
};

class RankScheduler {
public:
  /** @brief `spec`: speculative decoding (a decoding request runs 1 + k tokens; `seed` keys the acceptance draws). */
  RankScheduler(const SchedulerConfig& cfg, long num_blocks, models::SpecDecodeSpec spec = {}, std::uint64_t seed = 0)
      : cfg_(cfg), free_blocks_(num_blocks), total_blocks_(num_blocks), spec_(std::move(spec)), seed_(seed)
  {
  }

  void add(LiveRequest* r) { waiting_.push_back(r); }
  /** @brief vLLM V1's schedule(): running requests first (preempting from the back when blocks run out), then
   *  waiting ones while the budget, max_num_seqs and the KV cache allow (none after a preemption). */
  RankStep schedule();
  /** @brief The same into `step`, whose lists keep their capacity from step to step. */
  void schedule(RankStep& step);
  /** @brief After the step, which ended at `end_s`, step `tick` of its deployment: advance computed tokens; a
   *  request that has caught up samples a token. Returns the requests that finished (their blocks are freed); with
   *  `hand_over_after_first_token` (a prefill-only deployment) also those that just produced their first token, which
   *  leave for the decode deployment. */
  std::vector<LiveRequest*> complete(const RankStep& step, double end_s, StepTick tick,
                                     bool hand_over_after_first_token = false);

  int running() const { return static_cast<int>(running_.size()); }
  int waiting() const { return static_cast<int>(waiting_.size()); }
  long used_blocks() const { return total_blocks_ - free_blocks_; }
  long peak_used_blocks() const { return peak_used_; }
  long preemptions() const { return preemptions_; }
  /** @brief Prompt tokens of the requests admitted (again, after a preemption) with prefix caching on, and the
   *  part of them found in the cache (vLLM's prefix-cache queries and hits). */
  long prefix_queried_tokens() const { return prefix_queried_; }
  long prefix_hit_tokens() const { return prefix_hits_; }

private:
  bool allocate(LiveRequest* r, int num_new);
  void release(LiveRequest* r);
  long blocks_for(long tokens) const { return (tokens + cfg_.block_size - 1) / cfg_.block_size; }
  /** The whole blocks of the shared prefix that r's prompt starts with (what the rank can cache of it). */
  long prefix_whole_blocks(const LiveRequest* r) const { return r->req->prefix_len / cfg_.block_size; }
  int lifetime_tokens(const LiveRequest* r) const { return serving::lifetime_tokens(*r->req, spec_); }

  const SchedulerConfig& cfg_;
  std::deque<LiveRequest*> waiting_;
  std::vector<LiveRequest*> running_;
  long free_blocks_;
  long total_blocks_;
  long peak_used_      = 0;
  long preemptions_    = 0;
  long prefix_blocks_  = 0; ///< the shared prefix's whole blocks once cached on this rank (held for good)
  long prefix_queried_ = 0;
  long prefix_hits_    = 0;
  models::SpecDecodeSpec spec_;
  std::uint64_t seed_ = 0;
};

} // namespace dbosim::serving

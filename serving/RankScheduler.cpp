#include "serving/RankScheduler.hpp"

#include "serving/SpecAcceptance.hpp"

#include <algorithm>

namespace dbosim::serving {

bool RankScheduler::allocate(LiveRequest* r, int num_new)
{
  const long need = blocks_for(long(r->computed) + num_new) - r->shared_blocks - r->blocks;
  if (need > free_blocks_)
    return false;
  if (need > 0) {
    free_blocks_ -= need;
    r->blocks += need;
    peak_used_ = std::max(peak_used_, used_blocks());
  }
  return true;
}

void RankScheduler::release(LiveRequest* r)
{
  free_blocks_ += r->blocks;
  r->blocks        = 0;
  r->shared_blocks = 0; // the rank keeps the cached prefix; the request no longer reads it here
}

RankStep RankScheduler::schedule()
{
  RankStep step;
  schedule(step);
  return step;
}

void RankScheduler::schedule(RankStep& step)
{
  // A fresh step that keeps the lists' capacity.
  std::vector<LiveRequest*> scheduled = std::move(step.scheduled);
  std::vector<int> num_new            = std::move(step.num_new);
  scheduled.clear();
  num_new.clear();
  step           = RankStep{};
  step.scheduled = std::move(scheduled);
  step.num_new   = std::move(num_new);
  step.scheduled.reserve(running_.size() + 1);
  step.num_new.reserve(running_.size() + 1);
  int budget         = cfg_.max_num_batched_tokens;
  const int q_decode = spec_.tokens_per_request(); // vLLM: the last sampled token + its k drafts to verify
  auto take          = [&](LiveRequest* r, int n) {
    step.scheduled.push_back(r);
    step.num_new.push_back(n);
    step.tokens += n;
    const bool decodes = n == q_decode && r->computed > 0 && (q_decode == 1 || r->decoding());
    step.all_decode    = step.all_decode && decodes;
    step.context_sum += r->computed + n;
    if (decodes) {
      ++step.decode_batch;
      step.decode_tokens += n;
      step.decode_context_sum += r->computed + n;
    }
    budget -= n;
  };

  // Running requests, in order; when blocks run out, preempt from the back (recompute: the KV is dropped).
  std::size_t i = 0;
  while (i < running_.size() && budget > 0) {
    LiveRequest* r = running_[i];
    const int n    = std::min(r->decoding() ? q_decode : r->num_tokens() - r->computed, budget);
    bool ok        = true;
    while (!allocate(r, n)) {
      LiveRequest* victim = running_.back();
      running_.pop_back();
      release(victim);
      victim->computed = 0;
      ++victim->preemptions;
      ++preemptions_;
      ++step.preempted;
      waiting_.push_front(victim);
      if (victim == r) {
        ok = false;
        break;
      }
    }
    if (!ok)
      break;
    take(r, n);
    ++i;
  }

  // Waiting requests, FIFO, only when nothing was preempted this step.
  while (step.preempted == 0 && !waiting_.empty() && budget > 0 &&
         static_cast<int>(running_.size()) < cfg_.max_num_seqs) {
    LiveRequest* r = waiting_.front();
    // Prefix caching (vLLM's KV cache manager): a request admitted from nothing starts past the rank's cached
    // prefix blocks, short of its last prompt token (always computed: the step samples from it).
    const bool fresh = cfg_.enable_prefix_caching && r->computed == 0;
    const long hit_blocks =
        fresh ? std::min({prefix_blocks_, prefix_whole_blocks(r), long((r->num_tokens() - 1) / cfg_.block_size)}) : 0;
    const int hit_tokens = static_cast<int>(hit_blocks * cfg_.block_size);
    r->computed += hit_tokens;
    r->shared_blocks = hit_blocks;
    const int wanted = r->num_tokens() - r->computed;
    const int n      = std::min(wanted, budget);
    // Under `reserve` the request takes the blocks of its whole life at once (prompt, every output token and the
    // drafts of its last verification), so a started request never needs a block it cannot get.
    const int held = cfg_.kv_admission == KvAdmission::reserve ? lifetime_tokens(r) - r->computed : n;
    if ((!cfg_.enable_chunked_prefill && wanted > budget) || !allocate(r, held)) {
      r->computed -= hit_tokens;
      r->shared_blocks = 0;
      break;
    }
    if (fresh) {
      prefix_queried_ += r->num_tokens();
      prefix_hits_ += hit_tokens;
    }
    waiting_.pop_front();
    running_.push_back(r);
    take(r, n);
  }
}

std::vector<LiveRequest*> RankScheduler::complete(const RankStep& step, double end_s, StepTick tick,
                                                  bool hand_over_after_first_token)
{
  std::vector<LiveRequest*> finished;
  for (std::size_t k = 0; k < step.scheduled.size(); ++k) {
    LiveRequest* r = step.scheduled[k];
    // Verification: the leading accepted drafts keep their KV, plus the token sampled after them; the rejected
    // drafts' KV is dropped (vLLM rolls num_computed_tokens back). All of them stream to the client as one chunk.
    const int drafts   = spec_.enabled() && r->decoding() ? step.num_new[k] - 1 : 0;
    const int accepted = drafts > 0 ? accepted_drafts(spec_, seed_, r->req->id, r->generated, drafts) : 0;
    r->computed += drafts > 0 ? 1 + accepted : step.num_new[k];
    // The first request to compute the shared prefix's whole blocks leaves them in the rank's cache for good.
    const long prefix_whole = prefix_whole_blocks(r);
    if (cfg_.enable_prefix_caching && prefix_blocks_ == 0 && prefix_whole > 0 && r->shared_blocks == 0 &&
        r->computed >= prefix_whole * cfg_.block_size) {
      r->blocks -= prefix_whole;
      r->shared_blocks = prefix_whole;
      prefix_blocks_   = prefix_whole;
    }
    if (r->computed < r->num_tokens())
      continue; // a prefill chunk: no token yet
    if (r->first_token_s < 0)
      r->first_token_s = end_s;
    r->tokens.add(tick); // the gap since the last token: end_s - last_token_s, read back off the clock
    r->last_token_s = end_s;
    r->generated += std::min(1 + accepted, r->req->output_len - r->generated);
    const bool done = r->generated >= r->req->output_len;
    if (done || hand_over_after_first_token) {
      if (done)
        r->finish_s = end_s;
      release(r);
      running_.erase(std::find(running_.begin(), running_.end(), r));
      finished.push_back(r);
    }
  }
  return finished;
}

} // namespace dbosim::serving

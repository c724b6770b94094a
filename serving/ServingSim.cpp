#include "serving/ServingSim.hpp"

#include "config/InputError.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace dbosim::serving {

double host_gap_us(const Scenario& s) { return s.hw.stream_sync_us + s.scheduler.scheduler_cpu_us; }

ServingParams serving_params(const Scenario& s, const KvCapacity& kv)
{
  ServingParams p;
  p.file                       = s.file;
  p.dp                         = s.parallel.dp;
  p.gpus                       = s.parallel.dp * s.parallel.tp;
  p.scheduler                  = s.scheduler;
  p.kv_blocks_per_rank         = kv.num_blocks;
  p.host_gap_us                = host_gap_us(s);
  p.graph_decode               = s.execution.cuda_graph == CudaGraphMode::full && !s.execution.host_sync_after_comm;
  p.buckets.context_per_octave = s.serving.context_buckets_per_octave;
  p.buckets.token_per_octave   = s.serving.token_buckets_per_octave;
  return p;
}

namespace {

enum class MissPolicy { guess, simulate };

/** One pass over the whole workload. */
class Pass {
public:
  Pass(const ServingParams& p, const std::vector<Request>& reqs, int max_concurrency, StepTimeOracle& oracle,
       StepCache& cache, MissPolicy policy)
      : p_(p), reqs_(reqs), max_conc_(max_concurrency), oracle_(oracle), cache_(cache), policy_(policy)
  {
    for (int r = 0; r < p.dp; ++r)
      ranks_.emplace_back(p_.scheduler, p.kv_blocks_per_rank);
  }

  ServingResult run();
  std::set<StepKey> misses;

private:
  StepTime step_time(const StepKey& bucketed);
  void send_due(double now_s);
  int pick_rank();

  const ServingParams& p_;
  const std::vector<Request>& reqs_;
  int max_conc_;
  StepTimeOracle& oracle_;
  StepCache& cache_;
  MissPolicy policy_;
  std::vector<RankScheduler> ranks_;
  std::vector<LiveRequest> live_;
  std::size_t next_req_ = 0;
  int in_flight_        = 0;
  int rr_               = 0;
};

StepTime Pass::step_time(const StepKey& bucketed)
{
  if (const StepTime* t = cache_.find(bucketed))
    return *t;
  if (policy_ == MissPolicy::guess && cache_.size() > 0) {
    misses.insert(bucketed);
    return *cache_.nearest(bucketed);
  }
  const StepTime t = oracle_.simulate({bucketed}).at(0);
  cache_.insert(bucketed, t);
  return t;
}

int Pass::pick_rank()
{
  if (!p_.scheduler.dp_least_loaded)
    return rr_++ % p_.dp;
  int best = 0;
  for (int r = 1; r < p_.dp; ++r)
    if (ranks_[r].running() + ranks_[r].waiting() < ranks_[best].running() + ranks_[best].waiting())
      best = r;
  return best;
}

/** The client: every request whose arrival time has come is sent, unless max_concurrency are in flight. */
void Pass::send_due(double now_s)
{
  while (next_req_ < reqs_.size() && reqs_[next_req_].arrival_s <= now_s &&
         (max_conc_ == 0 || in_flight_ < max_conc_)) {
    LiveRequest& lr = live_[next_req_];
    lr.req          = &reqs_[next_req_];
    lr.send_s       = now_s;
    lr.rank         = pick_rank();
    ranks_[lr.rank].add(&lr);
    ++in_flight_;
    ++next_req_;
  }
}

ServingResult Pass::run()
{
  ServingResult res;
  live_.assign(reqs_.size(), LiveRequest{});
  double now_s     = 0;
  std::size_t done = 0;
  while (done < reqs_.size()) {
    send_due(now_s);
    std::vector<RankStep> steps;
    int max_rank = 0;
    bool any = false, all_decode = true;
    for (int r = 0; r < p_.dp; ++r) {
      steps.push_back(ranks_[r].schedule());
      any        = any || !steps.back().scheduled.empty();
      all_decode = all_decode && steps.back().all_decode;
      if (steps.back().tokens > steps[max_rank].tokens)
        max_rank = r;
    }
    if (!any) {
      bool queued = false;
      for (const auto& rk : ranks_)
        queued = queued || rk.waiting() > 0 || rk.running() > 0;
      if (queued)
        throw InternalError("serving: requests are queued but none can be scheduled (KV cache too small?)");
      if (next_req_ >= reqs_.size())
        throw InternalError("serving: no request left to send but some never finished");
      now_s = std::max(now_s, reqs_[next_req_].arrival_s); // idle until the next arrival
      continue;
    }
    const RankStep& big = steps[max_rank];
    StepRecord rec;
    rec.start_s     = now_s;
    rec.exact.phase = all_decode ? models::Phase::decode : models::Phase::prefill;
    // A uniform decode batch under full CUDA graphs runs the graph of the next capture size: vLLM's own padding.
    rec.exact.tokens      = all_decode && p_.graph_decode ? p_.buckets.tokens(big.tokens) : big.tokens;
    rec.exact.batch       = static_cast<int>(big.scheduled.size());
    rec.exact.context_len = big.scheduled.empty()
                                ? 1
                                : static_cast<int>((big.context_sum + static_cast<long>(big.scheduled.size()) / 2) /
                                                   static_cast<long>(big.scheduled.size()));
    rec.bucketed          = p_.buckets.bucket(rec.exact);
    const StepTime t      = step_time(rec.bucketed);
    rec.step_us           = t.step_us;
    rec.host_gap_us       = p_.scheduler.async_scheduling ? std::max(0.0, p_.host_gap_us - t.step_us) : p_.host_gap_us;
    rec.ubatches          = t.ubatches;
    rec.cuda_graph        = t.cuda_graph;
    for (int r = 0; r < p_.dp; ++r) {
      rec.running += ranks_[r].running();
      rec.waiting += ranks_[r].waiting();
      rec.kv_blocks_used = std::max(rec.kv_blocks_used, ranks_[r].used_blocks());
      rec.preempted += steps[r].preempted;
      rec.total_tokens += steps[r].tokens;
    }
    now_s += (rec.step_us + rec.host_gap_us) * 1e-6;
    for (int r = 0; r < p_.dp; ++r)
      for (LiveRequest* f : ranks_[r].complete(steps[r], now_s)) {
        (void)f;
        --in_flight_;
        ++done;
      }
    res.steps.push_back(rec);
  }
  for (const auto& rk : ranks_) {
    res.preemptions += rk.preemptions();
    res.peak_kv_blocks = std::max(res.peak_kv_blocks, rk.peak_used_blocks());
  }
  res.live = std::move(live_);
  return res;
}

} // namespace

ServingResult run_serving(const ServingParams& p, std::vector<Request> requests, int max_concurrency,
                          StepTimeOracle& oracle, StepCache& cache)
{
  const long blocks_needed_max = [&] {
    long m = 0;
    for (const Request& r : requests)
      m = std::max(m, (long(r.input_len) + r.output_len + p.scheduler.block_size - 1) / p.scheduler.block_size);
    return m;
  }();
  for (const Request& r : requests) {
    if (!p.scheduler.enable_chunked_prefill && r.input_len > p.scheduler.max_num_batched_tokens)
      throw InputError(p.file, 0, 0, "scheduler.max_num_batched_tokens",
                       fmt::format("request {} has a {}-token prompt and chunked prefill is off", r.id, r.input_len),
                       fmt::format(">= {} or enable_chunked_prefill: true", r.input_len));
  }
  if (blocks_needed_max > p.kv_blocks_per_rank)
    throw InputError(
        p.file, 0, 0, "workload.random_input_len",
        fmt::format("a request needs {} KV blocks, the rank's cache holds {}", blocks_needed_max, p.kv_blocks_per_rank),
        fmt::format("input + output <= {} tokens", p.kv_blocks_per_rank * p.scheduler.block_size));

  ServingResult res;
  int pass = 0;
  for (;; ++pass) {
    const MissPolicy policy = pass < p.max_guess_passes ? MissPolicy::guess : MissPolicy::simulate;
    Pass run(p, requests, max_concurrency, oracle, cache, policy);
    res = run.run();
    if (run.misses.empty())
      break;
    const std::vector<StepKey> keys(run.misses.begin(), run.misses.end());
    const std::vector<StepTime> times = oracle.simulate(keys);
    for (std::size_t i = 0; i < keys.size(); ++i)
      cache.insert(keys[i], times[i]);
  }
  res.passes   = pass + 1;
  res.requests = std::move(requests);
  for (auto& lr : res.live) // re-point at the result's own copy of the requests
    lr.req = &res.requests[static_cast<std::size_t>(&lr - res.live.data())];
  return res;
}

} // namespace dbosim::serving

#include "serving/ServingSim.hpp"

#include "base/InputError.hpp"
#include "config/EngineTable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace dbosim::serving {

double host_gap_us(const Scenario& s) { return s.hw.stream_sync_us + s.scheduler.scheduler_cpu_us; }

ServingParams serving_params(const Scenario& s, const KvCapacity& kv)
{
  ServingParams p;
  p.file                        = s.file;
  p.dp                          = s.parallel.dp;
  p.gpus                        = s.parallel.dp * s.parallel.tp;
  p.scheduler                   = s.scheduler;
  p.scheduler.kv_admission      = resolved_kv_admission(s.scheduler.kv_admission, s.engine);
  p.kv_blocks_per_rank          = kv.num_blocks;
  p.host_gap_us                 = host_gap_us(s);
  p.disaggregated               = s.scheduler.disaggregated_prefill;
  p.gpus                        = p.gpus * (p.disaggregated ? 2 : 1);
  p.kv_transfer_bytes_per_token = kv.kv_bytes_per_token;
  p.kv_transfer_bytes_per_s     = s.hw.nic_bytes_per_s;
  p.kv_transfer_latency_s       = s.hw.nic_latency_us * 1e-6;
  p.graph_decode                = s.execution.cuda_graph == CudaGraphMode::full && !s.execution.host_sync_after_comm;
  p.speculative                 = s.speculative;
  p.overlap                     = s.overlap;
  p.seed                        = s.seed;
  p.buckets.context_per_octave  = s.serving.context_buckets_per_octave;
  p.buckets.token_per_octave    = s.serving.token_buckets_per_octave;
  return p;
}

namespace {

enum class MissPolicy { guess, simulate };

/** A deployment stepping in lockstep: all its DP ranks, its own clock. Colocated serving has one; disaggregated
 *  serving a prefill-only one (a request leaves after its first token) and a decode one (requests arrive with their
 *  prompt's KV after the transfer). */
struct Group {
  std::vector<RankScheduler> ranks;
  double now_s      = 0;
  int rr            = 0;
  bool prefill_only = false;
  std::multimap<std::pair<double, int>, LiveRequest*> inbox; ///< (ready time, id) -> request handed over
  std::vector<ItlSplit> cum;   ///< per rank: its time so far by cause (ItlSplit), for the requests' gaps
  std::vector<double> end_s;   ///< the clock at the end of each step so far (the token times)
  std::vector<RankStep> steps; ///< each rank's step, kept from step to step for the lists' capacity
};

/** The StepKey of one rank's scheduled batch at the step's phase and padded tokens. */
using StepShapeOf = std::function<StepKey(const RankStep&)>;

/** One pass over the whole workload. */
class Pass {
public:
  Pass(const ServingParams& p, const std::vector<Request>& reqs, int max_concurrency, StepTimeOracle& oracle,
       StepCache& cache, MissPolicy policy)
      : p_(p), reqs_(reqs), max_conc_(max_concurrency), oracle_(oracle), cache_(cache), policy_(policy)
  {
    groups_.resize(p.disaggregated ? 2 : 1);
    groups_[0].prefill_only = p.disaggregated;
    for (Group& g : groups_) {
      for (int r = 0; r < p.dp; ++r)
        g.ranks.emplace_back(p_.scheduler, p.kv_blocks_per_rank, p.speculative, p.seed);
      g.cum.assign(static_cast<std::size_t>(p.dp), ItlSplit{});
    }
  }
  int pass_number = 1; ///< for progress reports (1 = the first pass)

  ServingResult run();
  std::set<StepKey> misses;

private:
  StepTime step_time(const StepKey& bucketed);
  const RankWork& rank_work(const StepKey& exact);
  void send_due(double now_s);
  int pick_rank(Group& g);
  void deliver(Group& g);
  double next_event_s(const Group& g, std::size_t index) const;
  bool step(Group& g, std::size_t index, ServingResult& res);
  bool dp_unsplit(const std::vector<RankStep>& steps, int padded, models::Phase phase) const;
  std::size_t critical_rank(const std::vector<RankStep>& steps, const StepShapeOf& key_of, std::size_t busiest,
                            std::vector<RankWork>& work, bool& work_known);
  void add_itl_split(Group& g, const std::vector<RankStep>& steps, const std::vector<RankWork>& work, bool work_known,
                     std::size_t crit, const StepTime& t, StepRecord& rec);
  void complete_step(Group& g, std::vector<RankStep>& steps, const StepTick& tick);
  void finish(LiveRequest* r);

  const ServingParams& p_;
  const std::vector<Request>& reqs_;
  int max_conc_;
  StepTimeOracle& oracle_;
  StepCache& cache_;
  MissPolicy policy_;
  std::vector<Group> groups_;
  std::vector<LiveRequest> live_;
  std::size_t next_req_    = 0;
  int in_flight_           = 0;
  std::size_t done_        = 0;
  double cap_free_since_s_ = 0;
  std::vector<char> had_token_; ///< complete_step's per-request flags, kept for their capacity
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

const RankWork& Pass::rank_work(const StepKey& exact)
{
  auto it = cache_.rank_work.find(exact);
  if (it == cache_.rank_work.end())
    it = cache_.rank_work.emplace(exact, oracle_.rank_work(exact)).first;
  return it->second;
}

int Pass::pick_rank(Group& g)
{
  if (!p_.scheduler.dp_least_loaded)
    return g.rr++ % p_.dp;
  int best = 0;
  for (int r = 1; r < p_.dp; ++r)
    if (g.ranks[r].running() + g.ranks[r].waiting() < g.ranks[best].running() + g.ranks[best].waiting())
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
    lr.send_s       = std::max(lr.req->arrival_s, cap_free_since_s_); // TTFT and E2E count from here
    groups_[0].inbox.emplace(std::make_pair(lr.send_s, lr.req->id), &lr);
    ++in_flight_;
    ++next_req_;
  }
}

/** Hands the group every request ready by its clock. */
void Pass::deliver(Group& g)
{
  while (!g.inbox.empty() && g.inbox.begin()->first.first <= g.now_s) {
    LiveRequest* r = g.inbox.begin()->second;
    g.inbox.erase(g.inbox.begin());
    r->rank       = pick_rank(g);
    r->split_mark = g.cum[static_cast<std::size_t>(r->rank)]; // time before it joined this rank: "other"
    g.ranks[static_cast<std::size_t>(r->rank)].add(r);
  }
}

/** When the group next has something to do if it is idle now: its next hand-over or (front group) arrival. */
double Pass::next_event_s(const Group& g, std::size_t index) const
{
  double t = g.inbox.empty() ? std::numeric_limits<double>::infinity() : g.inbox.begin()->first.first;
  if (index == 0 && next_req_ < reqs_.size() && (max_conc_ == 0 || in_flight_ < max_conc_))
    t = std::min(t, reqs_[next_req_].arrival_s);
  return t;
}

void Pass::finish(LiveRequest* r)
{
  if (max_conc_ > 0 && in_flight_ == max_conc_)
    cap_free_since_s_ = r->finish_s; // a slot opens: the client sends the next request now
  --in_flight_;
  ++done_;
}

/** Mean KV length of `requests` whose KV lengths sum to `kv_sum`, at least their share of `tokens` (as the cost models
 *  see a padded rank, a request attends over at least its share of the padded tokens). */
static int mean_kv(long kv_sum, long requests, long tokens)
{
  return static_cast<int>(std::max((kv_sum + requests / 2) / requests, (tokens + requests - 1) / requests));
}

/** vLLM micro-batches a step only when every DP rank wants to: each rank's own tokens against the threshold of its
 *  own batch kind (a uniform decode batch: the decode threshold; an idle rank runs a 1-token dummy decode batch).
 *  Set only where it changes the step (the padded tokens reach the step's threshold), so equal plans share a key. */
bool Pass::dp_unsplit(const std::vector<RankStep>& steps, int padded, models::Phase phase) const
{
  bool unsplit = false;
  if (p_.overlap.dbo_enabled() && padded >= p_.overlap.dbo_token_threshold(phase == models::Phase::decode))
    for (const RankStep& st : steps)
      unsplit =
          unsplit || std::max(1, st.tokens) < p_.overlap.dbo_token_threshold(st.scheduled.empty() || st.all_decode);
  return unsplit;
}

/** Each rank runs the padded tokens with its own requests and KV lengths; as the cost models see a padded rank, a
 *  request attends over at least its share of the padded tokens (a rank with fewer tokens than the busiest). In a
 *  mixed step the decoding requests are the key's decode part (the padding rides with the prompt part). */
static StepKey rank_step_key(const RankStep& st, models::Phase phase, int padded, bool dp_unsplit)
{
  StepKey k;
  k.phase      = phase;
  k.tokens     = padded;
  k.batch      = static_cast<int>(st.scheduled.size());
  k.dp_unsplit = dp_unsplit;
  if (phase == models::Phase::prefill && st.decode_batch > 0) {
    k.decode_tokens      = st.decode_tokens;
    k.decode_batch       = st.decode_batch;
    k.decode_context_len = mean_kv(st.decode_context_sum, st.decode_batch, st.decode_tokens);
  }
  const long prompts    = k.batch - k.decode_batch;
  const long prompts_kv = st.context_sum - (k.decode_batch > 0 ? st.decode_context_sum : 0);
  k.context_len         = prompts > 0 ? mean_kv(prompts_kv, prompts, padded - k.decode_tokens) : k.decode_context_len;
  return k;
}

/** Every dispatch waits for the rank whose own work (attention, work outside the layers, draft) is the longest: the
 *  step is that rank's; the others spin in their collectives for the difference. Without per-rank work it is the
 *  `busiest` rank (most tokens). Fills each rank's `work`. */
std::size_t Pass::critical_rank(const std::vector<RankStep>& steps, const StepShapeOf& key_of, std::size_t busiest,
                                std::vector<RankWork>& work, bool& work_known)
{
  std::size_t crit = busiest;
  if (p_.per_rank_work) {
    for (std::size_t r = 0; r < steps.size(); ++r)
      if (!steps[r].scheduled.empty()) {
        work[r]    = rank_work(key_of(steps[r]));
        work_known = work_known || work[r].total_us() > 0;
      }
    for (std::size_t r = 0; r < steps.size(); ++r)
      if (!steps[r].scheduled.empty() && work[r].total_us() > work[crit].total_us())
        crit = r;
  }
  return crit;
}

/** Each rank's step by cause. Without per-rank work (an oracle that has none) every rank is the step's shape. */
void Pass::add_itl_split(Group& g, const std::vector<RankStep>& steps, const std::vector<RankWork>& work,
                         bool work_known, std::size_t crit, const StepTime& t, StepRecord& rec)
{
  for (std::size_t r = 0; r < steps.size(); ++r) {
    const RankWork own = work_known ? work[r] : RankWork{0, t.step_work_us, t.draft_us};
    ItlSplit s;
    s.attention_spin_s = work_known ? std::max(0.0, work[crit].total_us() - own.total_us()) * 1e-6 : 0.0;
    s.step_work_s      = (own.step_work_us + rec.host_gap_us) * 1e-6;
    s.draft_s          = own.draft_us * 1e-6;
    s.expert_spin_s    = t.expert_spin_us * 1e-6;
    s.layers_s =
        (rec.step_us + rec.host_gap_us) * 1e-6 - s.step_work_s - s.draft_s - s.attention_spin_s - s.expert_spin_s;
    g.cum[r] += s;
    if (!steps[r].scheduled.empty())
      rec.attention_spin_us = std::max(rec.attention_spin_us, s.attention_spin_s * 1e6);
  }
}

/** The step has ended at the group's clock: each rank's requests take their tokens, the gaps they close get their
 *  time by cause, finished prefills hand their KV over to the decode deployment, finished requests leave. */
void Pass::complete_step(Group& g, std::vector<RankStep>& steps, const StepTick& tick)
{
  for (std::size_t r = 0; r < g.ranks.size(); ++r) {
    std::vector<char>& had_token = had_token_;
    had_token.resize(steps[r].scheduled.size());
    for (std::size_t k = 0; k < steps[r].scheduled.size(); ++k)
      had_token[k] = steps[r].scheduled[k]->first_token_s >= 0;
    const std::vector<LiveRequest*> finished = g.ranks[r].complete(steps[r], g.now_s, tick, g.prefill_only);
    // A token streamed this step closes a gap: its time by cause is the rank's since the request's last token.
    for (std::size_t k = 0; k < steps[r].scheduled.size(); ++k) {
      LiveRequest* q = steps[r].scheduled[k];
      if (q->last_token_s != g.now_s)
        continue;
      if (had_token[k])
        q->itl_split += g.cum[r] - q->split_mark;
      q->split_mark = g.cum[r];
    }
    for (LiveRequest* f : finished) {
      if (g.prefill_only && f->generated < f->req->output_len) { // hand the KV over to the decode deployment
        const double ready_s = g.now_s + p_.kv_transfer_latency_s +
                               double(f->computed) * p_.kv_transfer_bytes_per_token / p_.kv_transfer_bytes_per_s;
        groups_[1].inbox.emplace(std::make_pair(ready_s, f->req->id), f);
      } else
        finish(f);
    }
  }
}

/** One lockstep step of the group at its clock; false when it had nothing to run. */
bool Pass::step(Group& g, std::size_t index, ServingResult& res)
{
  std::vector<RankStep>& steps = g.steps;
  steps.resize(g.ranks.size());
  int max_rank = 0;
  bool any = false, all_decode = true;
  for (std::size_t r = 0; r < g.ranks.size(); ++r) {
    g.ranks[r].schedule(steps[r]);
    any        = any || !steps[r].scheduled.empty();
    all_decode = all_decode && steps[r].all_decode;
    if (steps[r].tokens > steps[static_cast<std::size_t>(max_rank)].tokens)
      max_rank = static_cast<int>(r);
  }
  if (!any)
    return false;
  const RankStep& big = steps[static_cast<std::size_t>(max_rank)];
  StepRecord rec;
  rec.pool                  = p_.disaggregated ? (g.prefill_only ? "prefill" : "decode") : "colocated";
  rec.start_s               = g.now_s;
  const models::Phase phase = all_decode ? models::Phase::decode : models::Phase::prefill;
  // A uniform decode batch under full CUDA graphs runs the graph of the next capture size: vLLM's own padding.
  const int padded      = all_decode && p_.graph_decode ? p_.buckets.tokens(big.tokens) : big.tokens;
  const bool unsplit    = dp_unsplit(steps, padded, phase);
  const StepShapeOf key = [&](const RankStep& st) { return rank_step_key(st, phase, padded, unsplit); };
  std::vector<RankWork> work(g.ranks.size());
  bool work_known        = false;
  const std::size_t crit = critical_rank(steps, key, static_cast<std::size_t>(max_rank), work, work_known);
  rec.exact              = key(steps[crit]);
  rec.critical_rank      = static_cast<int>(crit);
  rec.bucketed           = p_.buckets.bucket(rec.exact);
  const StepTime t       = step_time(rec.bucketed);
  rec.step_us            = t.step_us;
  rec.host_gap_us        = p_.scheduler.async_scheduling ? std::max(0.0, p_.host_gap_us - t.step_us) : p_.host_gap_us;
  rec.ubatches           = t.ubatches;
  rec.cuda_graph         = t.cuda_graph;
  rec.expert_spin_us     = t.expert_spin_us;
  rec.hot_rank_load      = t.hot_rank_load;
  add_itl_split(g, steps, work, work_known, crit, t, rec);
  for (std::size_t r = 0; r < g.ranks.size(); ++r) {
    rec.running += g.ranks[r].running();
    rec.waiting += g.ranks[r].waiting();
    rec.kv_blocks_used = std::max(rec.kv_blocks_used, g.ranks[r].used_blocks());
    rec.preempted += steps[r].preempted;
    rec.total_tokens += steps[r].tokens;
  }
  g.now_s += (rec.step_us + rec.host_gap_us) * 1e-6;
  g.end_s.push_back(g.now_s);
  complete_step(g, steps, StepTick{static_cast<int>(index), static_cast<long>(g.end_s.size()) - 1});
  res.steps.push_back(rec);
  return true;
}

ServingResult Pass::run()
{
  ServingResult res;
  live_.assign(reqs_.size(), LiveRequest{});
  for (std::size_t i = 0; i < reqs_.size(); ++i)
    live_[i].req = &reqs_[i];
  std::size_t iterations = 0;
  while (done_ < reqs_.size()) {
    if (p_.on_progress && (++iterations & 0xFFF) == 0)
      p_.on_progress(pass_number, done_, reqs_.size());
    // The group with the earliest clock moves next (a hand-over is always later than the step that made it).
    std::size_t gi = 0;
    for (std::size_t k = 1; k < groups_.size(); ++k)
      if (groups_[k].now_s < groups_[gi].now_s)
        gi = k;
    Group& g = groups_[gi];
    if (gi == 0)
      send_due(g.now_s);
    deliver(g);
    if (step(g, gi, res))
      continue;
    bool queued = false;
    for (const auto& rk : g.ranks)
      queued = queued || rk.waiting() > 0 || rk.running() > 0;
    if (queued)
      throw InternalError("serving: requests are queued but none can be scheduled (KV cache too small?)");
    double wake = next_event_s(g, gi);
    if (!std::isfinite(wake)) { // idle for good unless another group hands something over
      double other = std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < groups_.size(); ++k)
        if (k != gi)
          other = std::min(other, groups_[k].now_s);
      if (!std::isfinite(other))
        throw InternalError("serving: no request left to send but some never finished");
      wake = std::nextafter(std::max(other, g.now_s), std::numeric_limits<double>::infinity());
    }
    g.now_s = std::max(g.now_s, wake);
  }
  for (const Group& g : groups_)
    for (const auto& rk : g.ranks) {
      res.preemptions += rk.preemptions();
      res.prefix_queried_tokens += rk.prefix_queried_tokens();
      res.prefix_hit_tokens += rk.prefix_hit_tokens();
      res.peak_kv_blocks = std::max(res.peak_kv_blocks, rk.peak_used_blocks());
    }
  std::stable_sort(res.steps.begin(), res.steps.end(),
                   [](const StepRecord& a, const StepRecord& b) { return a.start_s < b.start_s; });
  res.live = std::move(live_);
  for (Group& g : groups_)
    res.clock.end_s.push_back(std::move(g.end_s));
  return res;
}

} // namespace

ServingResult run_serving(const ServingParams& p, std::vector<Request> requests, int max_concurrency,
                          StepTimeOracle& oracle, StepCache& cache)
{
  const long blocks_needed_max = [&] {
    long m = 0;
    for (const Request& r : requests)
      m = std::max(m, (long(lifetime_tokens(r, p.speculative)) + p.scheduler.block_size - 1) / p.scheduler.block_size);
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

  if (p.disaggregated && !(p.kv_transfer_bytes_per_s > 0))
    throw InputError(p.file, 0, 0, "scheduler.disaggregated_prefill",
                     "the hardware profile has no NIC bandwidth to move the KV cache with",
                     "a profile with nic_bandwidth");
  ServingResult res;
  // Guessing passes only pay where the misses they collect are simulated in parallel: otherwise one pass simulates
  // each miss where it occurs, the last pass's run (every step timed from a simulated shape) without the ones before.
  const int guess_passes = oracle.batches_in_parallel() ? p.max_guess_passes : 0;
  int pass               = 0;
  for (;; ++pass) {
    const MissPolicy policy = pass < guess_passes ? MissPolicy::guess : MissPolicy::simulate;
    Pass run(p, requests, max_concurrency, oracle, cache, policy);
    run.pass_number = pass + 1;
    res             = run.run();
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

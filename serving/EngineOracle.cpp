#include "serving/EngineOracle.hpp"

#include "serving/StepDiskCache.hpp"

#include "base/ByteIo.hpp"
#include "base/ChildProcess.hpp"
#include "base/Cores.hpp"
#include "base/InputError.hpp"
#include "models/AttentionOps.hpp"
#include "models/CostExplain.hpp"
#include "models/KernelCost.hpp"
#include "models/StepWork.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/plan/SpecDecodeStep.hpp"
#include "sim/plan/StepPlanBuilder.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>

namespace dbosim::serving {

namespace {
/** The plan options a step shape carries: the DP padding target and whether the DP ranks agreed to split. */
sim::PlanOptions plan_options(const StepKey& key)
{
  sim::PlanOptions popt;
  popt.max_tokens_across_dp  = key.tokens;
  popt.dp_ranks_agree_ubatch = !key.dp_unsplit;
  return popt;
}

/** The plan the engine runs for one step shape of the deployment (`moe_ops`: the MoE layers' ops kept across shapes,
 *  sim::model_cost_source). */
sim::StepPlan plan_at(const Deployment& v, const StepKey& key, sim::MoeOpsMemos* moe_ops = nullptr)
{
  return sim::build_step_plan(v, key, sim::model_cost_source(v, moe_ops), plan_options(key));
}

} // namespace

RankWork rank_work_here(const Deployment& v, const StepKey& key, RankWorkMemo* memo)
{
  // The plan the engine would run, with only the ops that differ between ranks costed (A0, A1; the MoE ops are the
  // same padded tokens on every rank): a serving run asks this for every rank's exact shape.
  // A0 does not depend on the layer kind (the dense and the MoE layers of a micro-batch shape share one costing) nor
  // on what models::attention_a0_key leaves out (a decode shape's KV length); A0's and A1's kernels but those that
  // read the context on what models::attention_a0_shared_key / attention_a1_shared_key leave out
  // (models::AttentionMemo); the step's work reads tokens and batch alone.
  sim::CostSource costs = sim::model_cost_source(v);
  RankWorkMemo here; // without `memo`: each op costed whole, nothing kept beyond this call
  costs.layer = [&v, memo, &here](const models::StepShape& shape, bool moe, int comm_sms) {
    models::LayerCosts lc;
    lc.moe = moe;
    if (memo && comm_sms == 0) {
      // With no SM partition the plan reads an op's duration and launches, not its per-kernel parts (the SM-scaling
      // model's input): A0 and A1 come from the memo that re-times only their context kernels, in every phase.
      lc.ops.push_back(memo->attention.a0(v.model, v.hw, v.parallel, shape));
      lc.ops.push_back(memo->attention.a1(v.model, v.hw, v.parallel, shape, moe, sim::comm_setup(v, 0)));
      return lc;
    }
    // Each op with its parts: a decode shape's A0 is kept across calls (prefill shapes' are too many to keep whole)
    RankWorkMemo& m                = memo && shape.phase == models::Phase::decode ? *memo : here;
    const models::StepShape a0_key = models::attention_a0_key(shape);
    auto at                        = m.a0.find(a0_key);
    if (at == m.a0.end())
      at = m.a0.emplace(a0_key, models::sum_kernels(v.hw, models::OpKind::A0, "gemm",
                                                    models::attention_a0_kernels(v.model, v.parallel, shape)))
               .first;
    lc.ops.push_back(at->second);
    lc.ops.push_back(models::attention_a1_cost(v.model, v.hw, v.parallel, shape, moe, sim::comm_setup(v, 0)));
    return lc;
  };
  if (memo)
    costs.step_work = [memo, cost = std::move(costs.step_work)](const models::StepShape& shape) {
      const models::StepShape work_key = models::step_work_key(shape);
      auto at                          = memo->step_work.find(work_key);
      if (at == memo->step_work.end()) {
        models::OpCost work = cost(shape);
        work.parts.clear(); // the plan reads the step's work's duration and launches (sim::set_step_work)
        work.parts.shrink_to_fit();
        at = memo->step_work.emplace(work_key, std::move(work)).first;
      }
      return at->second;
    };
  const sim::StepPlan plan = sim::build_step_plan(v, key, costs, plan_options(key));
  const bool partition     = plan.gpu.comm_sms > 0;
  RankWork w;
  const int moe_layers   = plan.num_layers - plan.first_k_dense;
  const int dense_layers = plan.first_k_dense;
  auto attention         = [&](const std::vector<sim::OpSpec>& ops) {
    double us = 0;
    for (const sim::OpSpec& o : ops)
      if (o.kind == models::OpKind::A0 || o.kind == models::OpKind::A1)
        us += partition ? o.partitioned_duration_us : o.duration_us;
    return us;
  };
  for (const sim::UbatchCosts& u : plan.ubatches)
    w.attention_us += attention(u.dense) * dense_layers + attention(u.moe) * moe_layers;
  w.step_work_us = plan.step_work_us;
  w.draft_us     = memo ? sim::scenario_draft_us(v, key, memo->draft) : sim::scenario_draft_cost(v, key).us;
  return w;
}

namespace {
/** What this process keeps for the scenario fingerprint (and engine) most recently asked about: step times, rank work
 *  and the costs kept across shapes (RankWorkMemo), which the points of a sweep or a plan that differ only in their
 *  request stream (a concurrency axis) share. One owner at a time, so that memory stays one group's (the sweep runs a
 *  group's points together). */
template <class T> struct SharedByOwner {
  std::string owner;
  T value;
  T& of(const std::string& who)
  {
    if (who != owner) {
      value = T{};
      owner = who;
    }
    return value;
  }
};
SharedByOwner<std::map<StepKey, StepTime>>& shared_times()
{
  static SharedByOwner<std::map<StepKey, StepTime>> s;
  return s;
}
SharedByOwner<std::map<StepKey, RankWork>>& shared_work()
{
  static SharedByOwner<std::map<StepKey, RankWork>> s;
  return s;
}
SharedByOwner<RankWorkMemo>& shared_memo()
{
  static SharedByOwner<RankWorkMemo> m;
  return m;
}
std::string owner_of(const Scenario& s, sim::EngineKind engine, const std::vector<std::string>& simgrid_args)
{
  return fmt::format("{}\nengine {} {}", s.step_fingerprint, sim::engine_name(engine), fmt::join(simgrid_args, " "));
}
} // namespace

RankWorkMemo& EngineOracle::memo()
{
  if (share_shapes_ && !scenario_.step_fingerprint.empty())
    return shared_memo().of(work_owner_);
  return rank_work_memo_;
}

RankWork EngineOracle::rank_work(const StepKey& key)
{
  const bool share               = share_shapes_ && !scenario_.step_fingerprint.empty();
  std::map<StepKey, RankWork>* t = share ? &shared_work().of(work_owner_) : nullptr;
  if (t)
    if (auto it = t->find(key); it != t->end())
      return it->second;
  if (disk_work_)
    if (const RankWork* w = disk_work_->work(key)) {
      if (t)
        t->emplace(key, *w);
      return *w;
    }
  const models::QuietCosts quiet; // thousands of exact shapes per run: their numbers, not their explanations
  const RankWork w = rank_work_here(scenario_, key, &memo());
  if (t)
    t->emplace(key, w);
  if (disk_work_)
    disk_work_->put(key, w);
  return w;
}

namespace {
StepTime step_time_of(const Deployment& v, const StepKey& key, const sim::StepPlan& plan, const sim::Metrics& m,
                      models::DraftMemo* draft = nullptr)
{
  StepTime t;
  // Speculative decoding: the draft's passes run after the target's forward (the engine's step), in series.
  t.draft_us        = draft ? sim::scenario_draft_us(v, key, *draft) : sim::scenario_draft_cost(v, key).us;
  t.step_us         = m.step_time_us + t.draft_us;
  t.exposed_comm_us = m.exposed_comm_us;
  t.overlap_us      = m.overlap_us;
  t.step_work_us    = m.step_work_us;
  t.expert_spin_us  = plan.expert_spin_us;
  t.hot_rank_load   = plan.hot_rank_load;
  t.ubatches        = plan.num_ubatches();
  t.cuda_graph      = plan.host.cuda_graph;
  for (int k = 0; k < sim::num_op_kinds; ++k)
    t.per_op_us[static_cast<std::size_t>(k)] = m.per_op[static_cast<std::size_t>(k)].total_us;
  return t;
}
} // namespace

StepTime simulate_step_here(const Deployment& v, const StepKey& key, const std::vector<std::string>& simgrid_args,
                            sim::EngineKind engine)
{
  const sim::StepPlan plan  = plan_at(v, key);
  const sim::Schedule sched = sim::build_schedule(plan);
  sim::StepRunOptions opt;
  opt.simgrid_args = simgrid_args;
  opt.engine       = engine;
  return step_time_of(v, key, plan, sim::run_step(plan, sched, opt).metrics);
}

namespace {

static_assert(std::is_trivially_copyable_v<StepTime>, "a child ships a StepTime as its bytes");

int default_jobs()
{
  if (const char* env = std::getenv("DBOSIM_ORACLE_JOBS"); env && std::atoi(env) > 0)
    return std::atoi(env);
  return usable_cores();
}

/** One step shape simulated in a forked child; its StepTime as bytes. */
std::string step_in_child(const Deployment& s, const StepKey& key, const std::vector<std::string>& simgrid_args)
{
  if (int null_fd = open("/dev/null", O_WRONLY); null_fd >= 0) // the engine's own prints stay out of our stdout
    dup2(null_fd, STDOUT_FILENO);
  const models::QuietCosts quiet;
  const StepTime t = simulate_step_here(s, key, simgrid_args);
  return std::string(reinterpret_cast<const char*>(&t), sizeof t);
}

bool write_text(int fd, const std::string& s)
{
  const std::uint64_t n = s.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, s.data(), s.size());
}

bool read_text(int fd, std::string& s)
{
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n))
    return false;
  s.resize(n);
  return read_all(fd, s.data(), n);
}

/** The children of one batch of shapes, up to `jobs` at once, each result in the order of `keys`. */
std::vector<sim::ChildResult> run_step_children(const Deployment& s, const std::vector<StepKey>& keys,
                                                const std::vector<std::string>& simgrid_args, int jobs)
{
  std::vector<sim::ChildResult> out(keys.size());
  std::deque<std::pair<sim::ChildProcess, std::size_t>> running; // collected in start order
  std::size_t next = 0;
  while (next < keys.size() || !running.empty()) {
    while (next < keys.size() && static_cast<int>(running.size()) < jobs) {
      const StepKey& key = keys[next];
      running.emplace_back(sim::ChildProcess([&] { return step_in_child(s, key, simgrid_args); }), next);
      ++next;
    }
    out[running.front().second] = running.front().first.wait();
    running.pop_front();
  }
  return out;
}

static_assert(std::is_trivially_copyable_v<StepKey>, "a StepKey crosses the pipe as its bytes");

} // namespace

/** The process that forks the step children: forked once from the oracle's process, it reads a batch of shapes from
 *  one pipe, runs their children (run_step_children) and writes back each child's outcome, exit code, signal,
 *  payload and message, in order, on another. An empty batch, the request pipe's end, or its parent's death
 *  (PR_SET_PDEATHSIG) ends it. */
class StepChildServer {
public:
  StepChildServer(const Deployment& s, const std::vector<std::string>& simgrid_args, int jobs)
  {
    int req[2], resp[2];
    if (pipe(req) != 0)
      throw InternalError("step-time oracle: cannot create a pipe");
    if (pipe(resp) != 0) {
      close(req[0]);
      close(req[1]);
      throw InternalError("step-time oracle: cannot create a pipe");
    }
    const pid_t parent = getpid();
    server_.emplace([&]() -> std::string {
      close(req[1]);
      close(resp[0]);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent)
        _exit(1);
      for (;;) {
        std::uint64_t n = 0;
        if (!read_all(req[0], &n, sizeof n) || n == 0)
          return {};
        std::vector<StepKey> keys(n);
        if (!read_all(req[0], keys.data(), n * sizeof(StepKey)))
          return {};
        for (const sim::ChildResult& r : run_step_children(s, keys, simgrid_args, jobs)) {
          const std::int32_t head[3] = {static_cast<std::int32_t>(r.outcome), r.exit_code, r.signal};
          if (!write_all(resp[1], head, sizeof head) || !write_text(resp[1], r.payload) ||
              !write_text(resp[1], r.message))
            return {};
        }
      }
    });
    close(req[0]);
    close(resp[1]);
    to_   = req[1];
    from_ = resp[0];
  }
  ~StepChildServer()
  {
    const std::uint64_t none = 0; // an empty batch: the server's end
    write_all(to_, &none, sizeof none);
    close(to_);
    close(from_);
    server_->wait();
  }
  StepChildServer(const StepChildServer&)            = delete;
  StepChildServer& operator=(const StepChildServer&) = delete;

  std::vector<sim::ChildResult> run(const std::vector<StepKey>& keys)
  {
    const std::uint64_t n = keys.size();
    if (!write_all(to_, &n, sizeof n) || !write_all(to_, keys.data(), n * sizeof(StepKey)))
      throw InternalError("step-time oracle: the process forking the step children is gone");
    std::vector<sim::ChildResult> out(keys.size());
    for (sim::ChildResult& r : out) {
      std::int32_t head[3];
      if (!read_all(from_, head, sizeof head) || !read_text(from_, r.payload) || !read_text(from_, r.message))
        throw InternalError("step-time oracle: the process forking the step children died");
      r.outcome   = static_cast<sim::ChildOutcome>(head[0]);
      r.exit_code = head[1];
      r.signal    = head[2];
    }
    return out;
  }

private:
  std::optional<sim::ChildProcess> server_;
  int to_   = -1;
  int from_ = -1;
};

EngineOracle::EngineOracle(const Scenario& s, int jobs, std::vector<std::string> simgrid_args, sim::EngineKind engine,
                           bool share_shapes)
    : scenario_(s), jobs_(jobs > 0 ? jobs : default_jobs()), simgrid_args_(std::move(simgrid_args)), engine_(engine),
      share_shapes_(share_shapes), work_owner_(owner_of(s, sim::EngineKind::replay, {}))
{
  if (const std::string dir = step_cache_dir(); !dir.empty() && !s.step_fingerprint.empty()) {
    disk_times_ = &step_disk_table(dir, owner_of(s, engine_, simgrid_args_));
    disk_work_  = &step_disk_table(dir, work_owner_);
  }
}

EngineOracle::~EngineOracle()
{
  // A write that fails leaves the cache colder, never a result different. Oracles that share shapes (a sweep's or
  // plan's workers) leave it to their worker, once per group of points (save_step_disk_tables).
  if (!share_shapes_)
    for (StepDiskTable* t : {disk_times_, disk_work_})
      if (t)
        t->save();
}

std::vector<StepTime> EngineOracle::simulate(const std::vector<StepKey>& keys)
{
  const models::QuietCosts quiet; // a step time, not its explanation
  std::vector<StepTime> out(keys.size());
  // A shape this process has run for a scenario with the same fingerprint, from memory; the replay where it is exact,
  // here; every other shape (and every shape on the SimGrid engine) in a child.
  std::vector<std::size_t> in_child;
  const bool share               = share_shapes_ && !scenario_.step_fingerprint.empty();
  std::map<StepKey, StepTime>* t = share ? &shared_times().of(owner_of(scenario_, engine_, simgrid_args_)) : nullptr;
  std::vector<bool> known(keys.size(), false);
  std::vector<bool> from_disk(keys.size(), false);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (t)
      if (auto it = t->find(keys[i]); it != t->end()) {
        out[i]   = it->second;
        known[i] = true;
        continue;
      }
    if (disk_times_)
      if (const StepTime* d = disk_times_->time(keys[i])) {
        out[i]       = *d;
        from_disk[i] = true;
        continue;
      }
    if (engine_ == sim::EngineKind::simgrid) {
      in_child.push_back(i);
      continue;
    }
    const sim::StepPlan plan = plan_at(scenario_, keys[i], &memo().moe_ops);
    const std::string why    = sim::replay_inexact_reason(plan);
    if (!why.empty()) {
      if (engine_ == sim::EngineKind::replay)
        sim::refuse_inexact_replay("--engine", why);
      in_child.push_back(i);
      continue;
    }
    const sim::Schedule sched = sim::build_schedule(plan);
    sim::StepRunOptions opt;
    opt.engine = sim::EngineKind::replay;
    out[i]     = step_time_of(scenario_, keys[i], plan, sim::run_step(plan, sched, opt).metrics, &memo().draft);
    ++simulated_;
    ++replayed_;
  }
  std::vector<sim::ChildResult> results;
  if (!in_child.empty()) {
    if (!children_)
      children_ = std::make_unique<StepChildServer>(scenario_, simgrid_args_, jobs_);
    std::vector<StepKey> batch;
    for (const std::size_t i : in_child)
      batch.push_back(keys[i]);
    results = children_->run(batch);
    simulated_ += static_cast<long>(in_child.size());
  }
  for (std::size_t c = 0; c < in_child.size(); ++c) {
    const std::size_t i      = in_child[c];
    const sim::ChildResult r = std::move(results[c]);
    const std::string shape  = keys[i].to_string();
    if (r.outcome == sim::ChildOutcome::input_error)
      throw InputError(scenario_.file, 0, 0, "workload", fmt::format("step {}: {}", shape, r.message));
    if (r.outcome == sim::ChildOutcome::killed)
      throw InternalError(fmt::format("step-time oracle: the child simulating {} died ({})", shape, r.message));
    if (!r.ok())
      throw InternalError(fmt::format("step {}: {}", shape, r.message));
    if (r.payload.size() != sizeof(StepTime))
      throw InternalError(fmt::format("step-time oracle: the child simulating {} sent {} bytes, not a step time", shape,
                                      r.payload.size()));
    std::memcpy(&out[i], r.payload.data(), sizeof(StepTime));
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (t && !known[i])
      t->emplace(keys[i], out[i]);
    if (disk_times_ && !known[i] && !from_disk[i])
      disk_times_->put(keys[i], out[i]);
  }
  return out;
}

} // namespace dbosim::serving

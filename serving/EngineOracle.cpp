#include "serving/EngineOracle.hpp"

#include "config/InputError.hpp"
#include "models/AttentionOps.hpp"
#include "models/KernelCost.hpp"
#include "sim/Metrics.hpp"
#include "sim/ScheduleRegistry.hpp"
#include "sim/SpecDecodeStep.hpp"
#include "sim/StepPlanBuilder.hpp"
#include "sim/TimelineEngine.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>

namespace dbosim::serving {

namespace {
/** The scenario at one step shape (its workload keys), and the plan the engine runs for it. */
Scenario at_key(const Scenario& s, const StepKey& key)
{
  Scenario v                 = s;
  v.workload.phase           = key.phase;
  v.workload.tokens_per_rank = key.tokens;
  v.workload.batch           = key.batch;
  v.workload.context_len     = key.context_len;
  return v;
}

sim::StepPlan plan_at(const Scenario& v, const StepKey& key)
{
  sim::PlanOptions popt;
  popt.max_tokens_across_dp = key.tokens;
  return sim::build_step_plan(v, sim::model_cost_source(v), popt);
}
} // namespace

RankWork rank_work_here(const Scenario& s, const StepKey& key)
{
  const Scenario v = at_key(s, key);
  // The plan the engine would run, with only the ops that differ between ranks costed (A0, A1; the MoE ops are the
  // same padded tokens on every rank): a serving run asks this for every rank's exact shape.
  sim::CostSource costs = sim::model_cost_source(v);
  costs.layer           = [&v](const models::StepShape& shape, bool moe, int) {
    models::LayerCosts lc;
    lc.moe = moe;
    lc.ops.push_back(models::sum_kernels(v.hw, models::OpKind::A0, "gemm",
                                                   models::attention_a0_kernels(v.model, v.parallel, shape)));
    lc.ops.push_back(models::sum_kernels(v.hw, models::OpKind::A1, "attention",
                                                   models::attention_a1_kernels(v.model, v.parallel, shape, moe)));
    return lc;
  };
  sim::PlanOptions popt;
  popt.max_tokens_across_dp = key.tokens;
  const sim::StepPlan plan  = sim::build_step_plan(v, costs, popt);
  const bool partition      = plan.gpu.comm_sms > 0;
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
  w.draft_us     = sim::scenario_draft_cost(v, sim::workload_shape(v)).us;
  return w;
}

RankWork EngineOracle::rank_work(const StepKey& key) { return rank_work_here(scenario_, key); }

StepTime simulate_step_here(const Scenario& s, const StepKey& key, const std::vector<std::string>& simgrid_args)
{
  const Scenario v          = at_key(s, key);
  const sim::StepPlan plan  = plan_at(v, key);
  const sim::Schedule sched = sim::build_schedule(plan);
  sim::TimelineEngine engine(sched, plan);
  const sim::Timeline tl = engine.run(1, simgrid_args);
  const sim::Metrics m   = sim::compute_metrics(sched, tl);
  StepTime t;
  // Speculative decoding: the draft's passes run after the target's forward (the engine's step), in series.
  t.draft_us        = sim::scenario_draft_cost(v, sim::workload_shape(v)).us;
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

namespace {

/** What a child writes to its pipe: plain bytes (StepTime is trivially copyable). */
struct ChildResult {
  int status = 0; ///< 0 ok, 2 input error, 1 internal error
  StepTime time;
  char message[512] = {};
};

struct Child {
  pid_t pid         = -1;
  int fd            = -1;
  std::size_t index = 0;
};

int default_jobs()
{
  if (const char* env = std::getenv("DBOSIM_ORACLE_JOBS"); env && std::atoi(env) > 0)
    return std::atoi(env);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

[[noreturn]] void run_child(const Scenario& s, const StepKey& key, const std::vector<std::string>& simgrid_args, int fd)
{
  if (int null_fd = open("/dev/null", O_WRONLY); null_fd >= 0) // the engine's own prints stay out of our stdout
    dup2(null_fd, STDOUT_FILENO);
  ChildResult r;
  try {
    r.time = simulate_step_here(s, key, simgrid_args);
  } catch (const InputError& e) {
    r.status = 2;
    std::snprintf(r.message, sizeof r.message, "%s", e.what());
  } catch (const std::exception& e) {
    r.status = 1;
    std::snprintf(r.message, sizeof r.message, "%s", e.what());
  }
  const bool ok = write(fd, &r, sizeof r) == static_cast<ssize_t>(sizeof r);
  _exit(ok ? 0 : 1);
}

ChildResult collect(const Child& c, const StepKey& key)
{
  ChildResult r;
  std::size_t got = 0;
  auto* bytes     = reinterpret_cast<char*>(&r);
  while (got < sizeof r) {
    const ssize_t n = read(c.fd, bytes + got, sizeof r - got);
    if (n <= 0)
      break;
    got += static_cast<std::size_t>(n);
  }
  close(c.fd);
  int status = 0;
  waitpid(c.pid, &status, 0);
  if (got != sizeof r || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw InternalError(
        fmt::format("step-time oracle: the child simulating {} died (status {})", key.to_string(), status));
  return r;
}

} // namespace

EngineOracle::EngineOracle(const Scenario& s, int jobs, std::vector<std::string> simgrid_args)
    : scenario_(s), jobs_(jobs > 0 ? jobs : default_jobs()), simgrid_args_(std::move(simgrid_args))
{
}

std::vector<StepTime> EngineOracle::simulate(const std::vector<StepKey>& keys)
{
  std::vector<StepTime> out(keys.size());
  std::deque<Child> running;
  std::size_t next = 0;
  std::fflush(stdout);
  std::fflush(stderr);
  while (next < keys.size() || !running.empty()) {
    while (next < keys.size() && static_cast<int>(running.size()) < jobs_) {
      int fds[2];
      if (pipe(fds) != 0)
        throw InternalError("step-time oracle: pipe failed");
      const pid_t pid = fork();
      if (pid < 0)
        throw InternalError("step-time oracle: fork failed");
      if (pid == 0) {
        close(fds[0]);
        run_child(scenario_, keys[next], simgrid_args_, fds[1]);
      }
      close(fds[1]);
      running.push_back({pid, fds[0], next});
      ++next;
      ++simulated_;
    }
    const Child c = running.front();
    running.pop_front();
    const ChildResult r = collect(c, keys[c.index]);
    if (r.status == 2)
      throw InputError(scenario_.file, 0, 0, "workload",
                       fmt::format("step {}: {}", keys[c.index].to_string(), r.message));
    if (r.status != 0)
      throw InternalError(fmt::format("step {}: {}", keys[c.index].to_string(), r.message));
    out[c.index] = r.time;
  }
  return out;
}

} // namespace dbosim::serving

#include "serving/EngineOracle.hpp"

#include "config/InputError.hpp"
#include "models/AttentionOps.hpp"
#include "models/KernelCost.hpp"
#include "sim/ChildProcess.hpp"
#include "sim/RunStep.hpp"
#include "sim/ScheduleRegistry.hpp"
#include "sim/SpecDecodeStep.hpp"
#include "sim/StepPlanBuilder.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <type_traits>
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
  const sim::Metrics m      = sim::run_step(plan, sched, {simgrid_args}).metrics;
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

static_assert(std::is_trivially_copyable_v<StepTime>, "a child ships a StepTime as its bytes");

int default_jobs()
{
  if (const char* env = std::getenv("DBOSIM_ORACLE_JOBS"); env && std::atoi(env) > 0)
    return std::atoi(env);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

/** One step shape simulated in a forked child; its StepTime as bytes. */
std::string step_in_child(const Scenario& s, const StepKey& key, const std::vector<std::string>& simgrid_args)
{
  if (int null_fd = open("/dev/null", O_WRONLY); null_fd >= 0) // the engine's own prints stay out of our stdout
    dup2(null_fd, STDOUT_FILENO);
  const StepTime t = simulate_step_here(s, key, simgrid_args);
  return std::string(reinterpret_cast<const char*>(&t), sizeof t);
}

} // namespace

EngineOracle::EngineOracle(const Scenario& s, int jobs, std::vector<std::string> simgrid_args)
    : scenario_(s), jobs_(jobs > 0 ? jobs : default_jobs()), simgrid_args_(std::move(simgrid_args))
{
}

std::vector<StepTime> EngineOracle::simulate(const std::vector<StepKey>& keys)
{
  std::vector<StepTime> out(keys.size());
  std::deque<std::pair<sim::ChildProcess, std::size_t>> running; // collected in start order
  std::size_t next = 0;
  while (next < keys.size() || !running.empty()) {
    while (next < keys.size() && static_cast<int>(running.size()) < jobs_) {
      const StepKey& key = keys[next];
      running.emplace_back(sim::ChildProcess([&] { return step_in_child(scenario_, key, simgrid_args_); }), next);
      ++next;
      ++simulated_;
    }
    const std::size_t i      = running.front().second;
    const sim::ChildResult r = running.front().first.wait();
    const std::string shape  = keys[i].to_string();
    running.pop_front();
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
  return out;
}

} // namespace dbosim::serving

#include "sim/ClusterEngine.hpp"

#include "config/InputError.hpp"
#include "sim/SimConfig.hpp"
#include "sim/TimelineEngine.hpp"

#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <memory>

namespace sg4 = simgrid::s4u;

namespace dbosim::sim {

// Same units as TimelineEngine: the GPU host computes one unit per SM per µs; the fabric host one unit per µs.
static constexpr double units_per_s   = 1e6;
static constexpr double us            = 1e-6;
static constexpr double comm_priority = 1e6;

namespace {

struct Collectives;

/** @brief One rank class: TimelineEngine's run state for its own hosts and actors. */
struct RankState {
  int id                = 0;
  const Schedule* sched = nullptr;
  const StepPlan* plan  = nullptr;
  Collectives* coll     = nullptr;
  int steps             = 1;
  sg4::Host* gpu        = nullptr;
  sg4::Host* fabric     = nullptr;

  std::vector<double> host_cost_us;
  std::vector<int> initial_pending;
  std::vector<std::vector<OpVertex>> cross_consumers;
  std::vector<int> pending;

  std::array<sg4::ActorPtr, num_streams> stream_actor;
  std::array<long, num_streams> stream_waiting{-1, -1};
  sg4::ActorPtr host_actor;
  bool host_waiting_drain = false;
  std::size_t ops_done    = 0;
  double step_start_s     = 0;

  std::vector<double> gpu_work, gpu_bound, fabric_work;
  Timeline timeline;
};

/** @brief The coupling: per collective vertex, how many classes have finished their part, and who waits. */
struct Collectives {
  int classes = 0;
  std::vector<int> arrived;
  std::vector<std::vector<sg4::ActorPtr>> waiting;
  double step_end_s = 0;
};

void wake_stream_if_waiting(RankState& st, OpVertex w)
{
  const int s = static_cast<int>(st.sched->graph[w].stream);
  if (st.stream_waiting[s] == static_cast<long>(w))
    st.stream_actor[s]->resume();
}

void complete(RankState& st, OpVertex v)
{
  st.pending[v] = st.initial_pending[v];
  for (OpVertex w : st.cross_consumers[v])
    if (--st.pending[w] == 0)
      wake_stream_if_waiting(st, w);
  ++st.ops_done;
  if (st.host_waiting_drain && st.ops_done == st.sched->num_ops())
    st.host_actor->resume();
}

sg4::ExecPtr exec_on(sg4::Host* host, double work)
{
  sg4::ExecPtr e = sg4::Exec::init();
  e->set_flops_amount(work);
  e->set_host(host);
  return e;
}

void run_activity(RankState& st, OpVertex v)
{
  if (st.fabric_work[v] > 0) {
    sg4::ExecPtr wire = exec_on(st.fabric, st.fabric_work[v]);
    wire->start();
    if (st.gpu_work[v] > 0) {
      sg4::ExecPtr sms = exec_on(st.gpu, st.gpu_work[v]);
      sms->set_bound(st.gpu_bound[v]);
      sms->set_priority(comm_priority);
      sms->start();
      wire->wait();
      sms->wait();
    } else {
      wire->wait();
    }
  } else if (st.gpu_work[v] > 0) {
    sg4::ExecPtr exec = exec_on(st.gpu, st.gpu_work[v]);
    if (st.gpu_bound[v] > 0)
      exec->set_bound(st.gpu_bound[v]);
    exec->start();
    exec->wait();
  }
}

/** @brief The collective ends for everyone when the last class has done its part. */
void join_collective(RankState& st, OpVertex v, int s)
{
  Collectives& c = *st.coll;
  if (++c.arrived[v] < c.classes) {
    c.waiting[v].push_back(st.stream_actor[s]);
    sg4::this_actor::suspend();
    return;
  }
  c.arrived[v] = 0;
  for (const sg4::ActorPtr& a : c.waiting[v])
    a->resume();
  c.waiting[v].clear();
}

void stream_loop(RankState* st, int s)
{
  const std::vector<OpVertex>& fifo = st->sched->stream_order[s];
  for (int step = 0; step < st->steps; ++step)
    for (OpVertex v : fifo) {
      while (st->pending[v] > 0) {
        st->stream_waiting[s] = static_cast<long>(v);
        sg4::this_actor::suspend();
        st->stream_waiting[s] = -1;
      }
      OpRecord& rec = st->timeline.ops[v];
      rec.start_us  = (sg4::Engine::get_clock() - st->step_start_s) / us;
      run_activity(*st, v);
      if (is_comm_kind(st->sched->graph[v].kind))
        join_collective(*st, v, s);
      rec.end_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
      complete(*st, v);
    }
}

void host_loop(RankState* st)
{
  const HostParams& hp = st->plan->host;
  const bool eager     = !hp.cuda_graph;
  for (int step = 0; step < st->steps; ++step) {
    st->step_start_s = sg4::Engine::get_clock();
    st->ops_done     = 0;
    if (!eager && hp.graph_launch_us > 0)
      sg4::this_actor::sleep_for(hp.graph_launch_us * us);
    for (OpVertex v : st->sched->issue_order) {
      OpRecord& rec     = st->timeline.ops[v];
      rec.host_begin_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
      if (st->host_cost_us[v] > 0)
        sg4::this_actor::sleep_for(st->host_cost_us[v] * us);
      rec.issue_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
      if (--st->pending[v] == 0)
        wake_stream_if_waiting(*st, v);
    }
    while (st->ops_done < st->sched->num_ops()) {
      st->host_waiting_drain = true;
      sg4::this_actor::suspend();
      st->host_waiting_drain = false;
    }
    st->timeline.step_time_us.push_back((sg4::Engine::get_clock() - st->step_start_s) / us);
  }
}

void prepare(RankState& st, const TimelineEngine& costs, const std::vector<double>& stream_us)
{
  const OpGraph& g    = st.sched->graph;
  const std::size_t n = st.sched->num_ops();
  const GpuParams& gp = st.plan->gpu;
  st.host_cost_us.assign(n, 0);
  st.initial_pending.assign(n, 1);
  st.cross_consumers.assign(n, {});
  st.gpu_work.assign(n, 0);
  st.gpu_bound.assign(n, 0);
  st.fabric_work.assign(n, 0);
  st.timeline.ops.assign(n, OpRecord{});
  const bool partition  = gp.comm_sms > 0;
  const int compute_sms = partition ? gp.sm_count - gp.comm_sms : gp.sm_count;
  for (OpVertex v = 0; v < n; ++v) {
    const Op& op       = g[v];
    st.host_cost_us[v] = costs.host_cost_us(v);
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e)
      if (g[*e].kind == EdgeKind::data && g[boost::target(*e, g)].stream != op.stream) {
        st.cross_consumers[v].push_back(boost::target(*e, g));
        ++st.initial_pending[boost::target(*e, g)];
      }
    const double d = stream_us[v];
    if (is_comm_kind(op.kind)) {
      st.fabric_work[v] = d;
      if (gp.comm_uses_sms) {
        const int held  = partition ? gp.comm_sms : 0;
        const double f  = partition ? gp.interference_partitioned : gp.interference_shared;
        const double b  = held + (gp.sm_count - held) * (1.0 - 1.0 / f);
        st.gpu_work[v]  = b * d;
        st.gpu_bound[v] = b * units_per_s;
      }
    } else {
      st.gpu_work[v]  = compute_sms * d;
      st.gpu_bound[v] = partition ? compute_sms * units_per_s : 0;
    }
  }
  st.pending = st.initial_pending;
}

} // namespace

ClusterEngine::ClusterEngine(const Schedule& sched, const std::vector<StepPlan>& plans) : sched_(sched), plans_(plans)
{
  if (plans.empty())
    throw InternalError("ClusterEngine: at least one rank class");
  for (const StepPlan& p : plans) {
    std::vector<double> stream_us(sched.num_ops());
    const bool partition = p.gpu.comm_sms > 0;
    for (OpVertex v = 0; v < sched.num_ops(); ++v) {
      const Op& op = sched.graph[v];
      const OpSpec* spec =
          op.ubatch < p.num_ubatches() ? p.ubatches[op.ubatch].find(p.moe_layer(op.layer), op.kind) : nullptr;
      if (!spec || p.num_layers != sched.num_layers)
        throw InternalError("ClusterEngine: a rank class's plan lacks an op of the schedule");
      stream_us[v] = (is_comm_kind(op.kind) || !partition ? spec->duration_us : spec->partitioned_duration_us) +
                     spec->kernels * p.host.kernel_gap_us;
    }
    stream_us_.push_back(std::move(stream_us));
  }
}

ClusterTimeline ClusterEngine::run(int steps, const std::vector<std::string>& simgrid_args)
{
  if (steps < 1)
    throw InternalError("ClusterEngine::run: steps must be >= 1");
  static bool simulated = false;
  if (simulated)
    throw InternalError("ClusterEngine::run: one simulation per process (SimGrid cannot reset); fork or start a "
                        "new process");
  simulated                     = true;
  std::vector<std::string> args = engine_args("dbosim", simgrid_args);
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());

  const std::size_t k = plans_.size();
  const std::size_t n = sched_.num_ops();
  Collectives coll;
  coll.classes = static_cast<int>(k);
  coll.arrived.assign(n, 0);
  coll.waiting.assign(n, {});

  auto* zone = sg4::create_full_zone("ranks");
  std::vector<std::unique_ptr<RankState>> ranks;
  std::vector<sg4::Host*> cpus;
  for (std::size_t c = 0; c < k; ++c) {
    auto st    = std::make_unique<RankState>();
    st->id     = static_cast<int>(c);
    st->sched  = &sched_;
    st->plan   = &plans_[c];
    st->coll   = &coll;
    st->steps  = steps;
    st->gpu    = zone->create_host(fmt::format("gpu{}", c), plans_[c].gpu.sm_count * units_per_s);
    st->fabric = zone->create_host(fmt::format("fabric{}", c), units_per_s);
    cpus.push_back(zone->create_host(fmt::format("cpu{}", c), units_per_s));
    TimelineEngine costs(sched_, plans_[c]);
    prepare(*st, costs, stream_us_[c]);
    ranks.push_back(std::move(st));
  }
  zone->seal();
  for (std::size_t c = 0; c < k; ++c) {
    RankState* sp       = ranks[c].get();
    sp->stream_actor[0] = sg4::Actor::create(fmt::format("compute{}", c), sp->gpu, [sp] { stream_loop(sp, 0); });
    sp->stream_actor[1] = sg4::Actor::create(fmt::format("comm{}", c), sp->gpu, [sp] { stream_loop(sp, 1); });
    sp->host_actor      = sg4::Actor::create(fmt::format("host{}", c), cpus[c], [sp] { host_loop(sp); });
  }
  engine.run();

  ClusterTimeline out;
  for (auto& st : ranks)
    if (static_cast<int>(st->timeline.step_time_us.size()) != steps)
      throw InternalError(
          fmt::format("cluster replay deadlocked: rank class {} ran {} of {} ops", st->id, st->ops_done, n));
  for (int s = 0; s < steps; ++s) {
    double t = 0;
    for (auto& st : ranks)
      t = std::max(t, st->timeline.step_time_us[s]);
    out.step_time_us.push_back(t);
  }
  for (auto& st : ranks)
    out.classes.push_back(std::move(st->timeline));
  return out;
}

} // namespace dbosim::sim

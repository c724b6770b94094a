#include "sim/engine/ClusterEngine.hpp"

#include "base/InputError.hpp"
#include "sim/engine/StreamActors.hpp"

#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <memory>

namespace sg4 = simgrid::s4u;

namespace dbosim::sim {

namespace {

/** @brief The coupling: per collective vertex, how many classes have finished their part, and who waits. */
struct Collectives {
  int classes = 0;
  std::vector<int> arrived;
  std::vector<std::vector<sg4::ActorPtr>> waiting;
};

/** @brief The collective ends for everyone when the last class has done its part. */
void join_collective(Collectives& c, OpVertex v)
{
  if (++c.arrived[v] < c.classes) {
    c.waiting[v].push_back(sg4::Actor::self());
    sg4::this_actor::suspend();
    return;
  }
  c.arrived[v] = 0;
  for (const sg4::ActorPtr& a : c.waiting[v])
    a->resume();
  c.waiting[v].clear();
}

} // namespace

ClusterEngine::ClusterEngine(const Schedule& sched, const std::vector<StepPlan>& plans) : sched_(sched), plans_(plans)
{
  if (plans.empty())
    throw InternalError("ClusterEngine: at least one rank class");
  for (const StepPlan& p : plans) {
    OpDurations d = plan_op_durations(sched, p);
    stream_us_.push_back(std::move(d.stream_us));
    flight_us_.push_back(std::move(d.flight_us));
  }
}

ClusterTimeline ClusterEngine::run(int steps, const std::vector<std::string>& simgrid_args)
{
  if (steps < 1)
    throw InternalError("ClusterEngine::run: steps must be >= 1");
  std::unique_ptr<sg4::Engine> engine = make_engine("ClusterEngine::run", simgrid_args);

  const std::size_t k = plans_.size();
  const std::size_t n = sched_.num_ops();
  Collectives coll;
  coll.classes = static_cast<int>(k);
  coll.arrived.assign(n, 0);
  coll.waiting.assign(n, {});

  auto* zone = sg4::create_full_zone("ranks");
  std::vector<std::unique_ptr<StreamRun>> ranks;
  std::vector<sg4::Host*> cpus;
  for (std::size_t c = 0; c < k; ++c) {
    auto st        = std::make_unique<StreamRun>();
    st->sched      = &sched_;
    st->plan       = &plans_[c];
    st->steps      = steps;
    st->gpu        = zone->create_host(fmt::format("gpu{}", c), plans_[c].gpu.sm_count * units_per_s);
    st->fabric     = zone->create_host(fmt::format("fabric{}", c), units_per_s);
    st->after_comm = [&coll](OpVertex v, int) { join_collective(coll, v); };
    cpus.push_back(zone->create_host(fmt::format("cpu{}", c), units_per_s));
    prepare_stream_run(*st, host_costs_us(sched_, plans_[c].host), stream_us_[c], flight_us_[c]);
    ranks.push_back(std::move(st));
  }
  zone->seal();
  for (std::size_t c = 0; c < k; ++c)
    start_stream_actors(*ranks[c], cpus[c], fmt::format("r{}_", c));
  engine->run();

  ClusterTimeline out;
  for (std::size_t c = 0; c < k; ++c)
    if (static_cast<int>(ranks[c]->timeline.step_time_us.size()) != steps)
      throw InternalError(
          fmt::format("cluster replay deadlocked: rank class {} ran {} of {} ops", c, ranks[c]->ops_done, n));
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

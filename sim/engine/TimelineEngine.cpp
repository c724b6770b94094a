#include "sim/engine/TimelineEngine.hpp"

#include "base/InputError.hpp"
#include "sim/engine/StreamActors.hpp"

#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <memory>

namespace sg4 = simgrid::s4u;

namespace dbosim::sim {

TimelineEngine::TimelineEngine(const Schedule& sched, const StepPlan& plan) : sched_(sched), plan_(plan)
{
  host_cost_us_ = host_costs_us(sched, plan.host);
}

Timeline TimelineEngine::run(int steps, const std::vector<std::string>& simgrid_args)
{
  if (steps < 1)
    throw InternalError("TimelineEngine::run: steps must be >= 1");
  std::unique_ptr<sg4::Engine> engine = make_engine("TimelineEngine::run", simgrid_args);

  auto* zone = sg4::create_full_zone("rank0");
  StreamRun st;
  st.sched       = &sched_;
  st.plan        = &plan_;
  st.steps       = steps;
  st.gpu         = zone->create_host("gpu0", plan_.gpu.sm_count * units_per_s);
  st.fabric      = zone->create_host("fabric0", units_per_s);
  sg4::Host* cpu = zone->create_host("cpu0", units_per_s);
  zone->seal();

  const std::size_t n = sched_.num_ops();
  std::vector<double> stream_us(n), flight_us(n);
  for (OpVertex v = 0; v < n; ++v) {
    stream_us[v] = stream_duration_us(sched_.ops[v], plan_);
    flight_us[v] = sched_.ops[v].flight_us;
  }
  prepare_stream_run(st, host_cost_us_, stream_us, flight_us);
  start_stream_actors(st, cpu, "");
  engine->run();

  if (static_cast<int>(st.timeline.step_time_us.size()) != steps)
    throw InternalError(
        fmt::format("schedule {}: the replay deadlocked ({} of {} ops of the step ran)", sched_.name, st.ops_done, n));
  return std::move(st.timeline);
}

} // namespace dbosim::sim

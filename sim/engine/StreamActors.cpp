#include "sim/engine/StreamActors.hpp"

#include "base/InputError.hpp"
#include "sim/engine/SimConfig.hpp"
#include "sim/schedules/OpGraph.hpp"

#include <fmt/format.h>

namespace sg4 = simgrid::s4u;

XBT_LOG_NEW_DEFAULT_CATEGORY(dbo_engine, "dbosim timeline engine: op issue, start and end");

namespace dbosim::sim {

namespace {

void wake_stream_if_waiting(StreamRun& st, OpVertex w)
{
  const int s = static_cast<int>(st.sched->ops[w].stream);
  if (st.stream_waiting[s] == static_cast<long>(w))
    st.stream_actor[s]->resume();
}

void complete(StreamRun& st, OpVertex v, int step)
{
  st.pending[v]   = st.initial_pending[v]; // ready for the next step: every decrement of this step has happened
  st.done_step[v] = step;
  for (OpVertex w : st.cross_consumers[v])
    if (--st.pending[w] == 0)
      wake_stream_if_waiting(st, w);
  ++st.ops_done;
  if (st.host_waiting_op == static_cast<long>(v) || (st.host_waiting_drain && st.ops_done == st.sched->num_ops()))
    st.host_actor->resume();
}

/* An Exec of `work` units on `host`. (Host::exec_init in 3.32 runs on the calling actor's host, not on `host`.) */
sg4::ExecPtr exec_on(sg4::Host* host, double work)
{
  sg4::ExecPtr e = sg4::Exec::init();
  e->set_flops_amount(work);
  e->set_host(host);
  return e;
}

/* A comm op: its wire time on the fabric and, if SM-resident, its SM share on the GPU for as long as the wire runs.
 * A compute op: its SM·µs on the GPU; meanwhile it slows a comm kernel beside it by the profile's factor f_c, as a
 * high-priority share 1 - 1/f_c of the fabric host (what is left, 1/f_c, is the comm's rate). */
void run_activity(StreamRun& st, OpVertex v)
{
  if (st.fabric_work[v] > 0) {
    sg4::ExecPtr wire = exec_on(st.fabric, st.fabric_work[v]);
    wire->start();
    if (st.gpu_work[v] > 0) {
      sg4::ExecPtr sms = exec_on(st.gpu, open_ended_work);
      sms->set_bound(st.gpu_bound[v]);
      sms->set_priority(comm_priority);
      sms->start();
      wire->wait();
      sms->cancel();
    } else {
      wire->wait();
    }
  } else if (st.gpu_work[v] > 0) {
    sg4::ExecPtr exec = exec_on(st.gpu, st.gpu_work[v]);
    if (st.gpu_bound[v] > 0)
      exec->set_bound(st.gpu_bound[v]);
    exec->start();
    sg4::ExecPtr drag;
    if (st.comm_drag_bound > 0) {
      drag = exec_on(st.fabric, open_ended_work);
      drag->set_bound(st.comm_drag_bound);
      drag->set_priority(comm_priority);
      drag->start();
    }
    exec->wait();
    if (drag)
      drag->cancel();
  }
}

/* A collective with a recv hook, once its send kernel has ended: its data goes in flight on the rank's flight actor,
 * so that the stream goes on. A collective sent while another is in flight (the other micro-batch's, as DeepEP
 * low-latency's two buffers allow) queues behind it: the rank's flights take its links one after the other. */
void launch_flight(StreamRun& st, OpVertex v, int step, int s)
{
  st.flights.push_back({v, step, s});
  if (st.flight_idle)
    st.flight_actor->resume();
}

/* The rank's flights, one at a time: each lasts its flight on the fabric, then (in a cluster) waits for the other
 * ranks' data, then ends its collective, which releases the recv hook. One actor for all of them: creating an actor
 * per flight made the EP256 SimGrid replay ~3x slower. */
void flight_loop(StreamRun* st)
{
  for (;;) {
    while (st->flights.empty()) {
      st->flight_idle = true;
      sg4::this_actor::suspend();
      st->flight_idle = false;
    }
    const StreamRun::Flight f = st->flights.front();
    st->flights.pop_front();
    st->flight_busy = true;
    exec_on(st->fabric, st->fabric_work[f.op])->wait();
    if (st->after_comm)
      st->after_comm(f.op, f.stream);
    st->timeline.ops[f.op].arrive_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
    st->flight_busy                  = false;
    complete(*st, f.op, f.step);
  }
}

/* Residency: a comm kernel whose CTAs need whole SMs, launched on shared SMs while a compute op runs, gets SMs only
 * when that op ends. The yield lets a compute op that became ready at this same instant start first (the compute
 * stream's next kernel is already queued behind the one that just ended; the comm kernel's launch waits on an event).
 */
void wait_for_sms(StreamRun& st, int s)
{
  sg4::this_actor::yield();
  while (st.compute_running) {
    st.sms_waiter = s;
    sg4::this_actor::suspend();
  }
  st.sms_waiter = -1;
}

void stream_loop(StreamRun* st, int s)
{
  const std::vector<OpVertex>& fifo = st->sched->stream_order[s];
  for (int step = 0; step < st->steps; ++step)
    for (OpVertex v : fifo) {
      while (st->pending[v] > 0) {
        st->stream_waiting[s] = static_cast<long>(v);
        sg4::this_actor::suspend();
        st->stream_waiting[s] = -1;
      }
      const bool comm    = is_comm_kind(st->sched->ops[v].kind);
      const bool flight  = st->sched->ops[v].flight_us > 0;
      const bool timed   = st->timed_us[v] >= 0;
      const bool compute = !comm && s == static_cast<int>(StreamId::compute);
      OpRecord& rec      = st->timeline.ops[v];
      rec.start_us       = (sg4::Engine::get_clock() - st->step_start_s) / us;
      if (comm && st->wait_for_sms)
        wait_for_sms(*st, s);
      if (compute)
        st->compute_running = true;
      if (timed)
        sg4::this_actor::sleep_for(st->timed_us[v] * us);
      else
        run_activity(*st, v);
      if (compute) {
        st->compute_running = false;
        if (st->sms_waiter >= 0)
          st->stream_actor[st->sms_waiter]->resume();
      }
      if (comm && !flight && st->after_comm)
        st->after_comm(v, s);
      rec.end_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
      XBT_VERB("%s stream: %s layer %d ubatch %d ran %.3f-%.3f us (issued %.3f)", stream_name(StreamId(s)),
               op_kind_name(st->sched->ops[v].kind), st->sched->ops[v].layer, st->sched->ops[v].ubatch, rec.start_us,
               rec.end_us, rec.issue_us);
      if (flight)
        launch_flight(*st, v, step, s);
      else
        complete(*st, v, step);
    }
}

void host_loop(StreamRun* st)
{
  const HostParams& hp = st->plan->host;
  const bool eager     = !hp.cuda_graph;
  for (int step = 0; step < st->steps; ++step) {
    st->step_start_s = sg4::Engine::get_clock();
    st->ops_done     = 0;
    if ((hp.cuda_graph || hp.piecewise) && hp.graph_launch_us > 0) // the step's graph; piecewise: its first piece
      sg4::this_actor::sleep_for(hp.graph_launch_us * us);
    for (OpVertex v : st->sched->issue_order) {
      OpRecord& rec     = st->timeline.ops[v];
      rec.host_begin_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
      if (st->host_cost_us[v] > 0)
        sg4::this_actor::sleep_for(st->host_cost_us[v] * us);
      rec.issue_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
      if (--st->pending[v] == 0)
        wake_stream_if_waiting(*st, v);
      if (eager && hp.host_sync_after_comm && is_comm_kind(st->sched->ops[v].kind)) {
        // ROCm + DeepEP high-throughput: synchronize() so the next micro-batch cannot reuse the workspace early.
        while (st->done_step[v] != step) {
          st->host_waiting_op = static_cast<long>(v);
          sg4::this_actor::suspend();
          st->host_waiting_op = -1;
        }
        if (hp.stream_sync_us > 0)
          sg4::this_actor::sleep_for(hp.stream_sync_us * us);
        rec.sync_end_us = (sg4::Engine::get_clock() - st->step_start_s) / us;
      }
    }
    while (st->ops_done < st->sched->num_ops()) {
      st->host_waiting_drain = true;
      sg4::this_actor::suspend();
      st->host_waiting_drain = false;
    }
    st->timeline.step_time_us.push_back((sg4::Engine::get_clock() - st->step_start_s) / us);
  }
}

} // namespace

void prepare_stream_run(StreamRun& st, const std::vector<double>& host_cost_us, const std::vector<double>& stream_us,
                        const std::vector<double>& flight_us)
{
  const OpDag& g      = st.sched->graph->dag;
  const std::size_t n = st.sched->num_ops();
  const GpuParams& gp = st.plan->gpu;
  st.host_cost_us     = host_cost_us;
  st.initial_pending.assign(n, 1);
  st.cross_consumers.assign(n, {});
  st.done_step.assign(n, -1);
  st.gpu_work.assign(n, 0);
  st.gpu_bound.assign(n, 0);
  st.fabric_work.assign(n, 0);
  st.timed_us.assign(n, -1);
  st.timeline.ops.assign(n, OpRecord{});

  const bool partition  = gp.comm_sms > 0;
  const int compute_sms = partition ? gp.sm_count - gp.comm_sms : gp.sm_count;
  if (gp.comm_uses_sms) {
    const double fc    = partition ? gp.comm_slowdown_partitioned : gp.comm_slowdown_shared;
    st.comm_drag_bound = (1.0 - 1.0 / fc) * units_per_s;
    st.wait_for_sms    = gp.comm_needs_whole_sms && !partition;
  }
  for (OpVertex v = 0; v < n; ++v) {
    const Op& op = st.sched->ops[v];
    // A collective in flight releases even its consumers on its own stream (the recv hook) only when it lands.
    const bool flight = op.flight_us > 0; // the schedule says which ops fly; `flight_us` how long, on this rank
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e)
      if (g[*e].kind == EdgeKind::data && (flight || st.sched->ops[boost::target(*e, g)].stream != op.stream)) {
        st.cross_consumers[v].push_back(boost::target(*e, g));
        ++st.initial_pending[boost::target(*e, g)];
      }
    const double d = stream_us[v];
    if (flight) {
      if (!is_comm_kind(op.kind) || gp.comm_uses_sms)
        throw InternalError(fmt::format("{} has a flight: only a D or C whose kernels hold no SMs (DeepEP "
                                        "low-latency) runs as send + recv hook",
                                        op_kind_name(op.kind)));
      st.timed_us[v]    = d;
      st.fabric_work[v] = flight_us[v];
    } else if (is_recv_hook(op.kind)) {
      if (gp.comm_uses_sms)
        throw InternalError(
            fmt::format("{}: recv hooks are modelled for comm kernels that hold no SMs only", op_kind_name(op.kind)));
      st.timed_us[v] = d;
    } else if (is_comm_kind(op.kind)) {
      st.fabric_work[v] = d;
      if (gp.comm_uses_sms) {
        // The comm kernel holds its SMs and, through its memory traffic, slows what runs beside it by factor f:
        // its share b = held + (rest)(1 - 1/f) leaves compute rest/f.
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

void start_stream_actors(StreamRun& st, sg4::Host* cpu, const std::string& prefix)
{
  StreamRun* sp      = &st;
  st.stream_actor[0] = sg4::Actor::create(prefix + "compute_stream", st.gpu, [sp] { stream_loop(sp, 0); });
  st.stream_actor[1] = sg4::Actor::create(prefix + "comm_stream", st.gpu, [sp] { stream_loop(sp, 1); });
  st.host_actor      = sg4::Actor::create(prefix + "host", cpu, [sp] { host_loop(sp); });
  for (const Op& op : st.sched->ops)
    if (op.flight_us > 0) {
      st.flight_actor = sg4::Actor::create(prefix + "flights", st.gpu, [sp] { flight_loop(sp); });
      st.flight_actor->daemonize(); // ends with the streams and the host
      break;
    }
}

std::unique_ptr<sg4::Engine> make_engine(const std::string& who, const std::vector<std::string>& simgrid_args)
{
  // SimGrid 3.32 cannot reset: a second engine aborts ("Cannot change the model after the initialization").
  static bool simulated = false;
  if (simulated)
    throw InternalError(
        fmt::format("{}: one simulation per process (SimGrid cannot reset); fork or start a new process", who));
  simulated                     = true;
  std::vector<std::string> args = engine_args("dbosim", simgrid_args);
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  // A bad user option (--cfg=unknown:1) is bad input, not a dbosim bug.
  try {
    return std::make_unique<sg4::Engine>(&argc, argv.data());
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw InputError("SimGrid options", what.substr(0, what.find('\n')));
  }
}

} // namespace dbosim::sim

#include "sim/output/TraceWriter.hpp"

#include "sim/schedules/OpGraph.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace dbosim::sim {

namespace {

constexpr int host_tid0 = 10;

double ns(double us) { return std::round(us * 1e3) / 1e3; }

int stream_tid(StreamId s) { return 1 + static_cast<int>(s); }
constexpr int flight_tid = 1 + num_streams; // collectives in flight between their send and their recv hook

/** Each event's keys are written in sorted order, as nlohmann::json (a std::map) orders them: the files read the same
 *  as when the trace was a JSON tree. */
struct RankTrace {
  JsonStream& js;
  int pid;

  /** A slice's keys after "args" (the caller writes "args" first when it has them). */
  void slice_body(const char* name, const char* cat, int tid, double start_us, double end_us)
  {
    js.key("cat").value(cat);
    js.key("dur").value(ns(end_us - start_us));
    js.key("name").value(name);
    js.key("ph").value("X");
    js.key("pid").value(pid);
    js.key("tid").value(tid);
    js.key("ts").value(ns(start_us));
    js.end_object();
  }
  void slice(const char* name, const char* cat, int tid, double start_us, double end_us)
  {
    js.begin_object();
    slice_body(name, cat, tid, start_us, end_us);
  }
  void metadata(const char* what, const std::string& name, int tid)
  {
    js.begin_object();
    js.key("args").begin_object().key("name").value(name).end_object();
    js.key("name").value(what);
    js.key("ph").value("M");
    js.key("pid").value(pid);
    if (tid >= 0)
      js.key("tid").value(tid);
    js.end_object();
  }
  void thread_name(int tid, const std::string& name) { metadata("thread_name", name, tid); }
  void flow(const char* ph, std::int64_t id, int tid, double ts)
  {
    js.begin_object();
    if (ph[0] == 'f')
      js.key("bp").value("e");
    js.key("cat").value("wait");
    js.key("id").value(id);
    js.key("name").value("event");
    js.key("ph").value(ph);
    js.key("pid").value(pid);
    js.key("tid").value(tid);
    js.key("ts").value(ts);
    js.end_object();
  }
  void counter(double ts, int comm_sms, int compute_sms)
  {
    js.begin_object();
    js.key("args").begin_object().key("comm_sms").value(comm_sms).key("compute_sms").value(compute_sms).end_object();
    js.key("name").value("SM partition");
    js.key("ph").value("C");
    js.key("pid").value(pid);
    js.key("ts").value(ns(ts));
    js.end_object();
  }
};

/** The process's and its tracks' names: the streams, the flights (when an op flies), one host thread per
 *  micro-batch. */
void write_track_names(RankTrace& t, const Schedule& sched, const std::string& process_name)
{
  const std::vector<Op>& g = sched.ops;
  t.metadata("process_name", process_name, -1);
  t.thread_name(stream_tid(StreamId::compute), "compute stream");
  t.thread_name(stream_tid(StreamId::comm), "comm stream");
  for (OpVertex v = 0; v < sched.num_ops(); ++v)
    if (g[v].flight_us > 0) {
      t.thread_name(flight_tid, "in flight (send to recv hook)");
      break;
    }
  for (int ub = 0; ub < sched.num_ubatches; ++ub)
    t.thread_name(host_tid0 + ub, "host thread ubatch " + std::to_string(ub));
}

/** Every op's slice on its stream, its flight and its host launch and sync; the step's graph launch first. */
void write_op_slices(RankTrace& t, JsonStream& js, const Schedule& sched, const StepPlan& plan, const Timeline& tl)
{
  const std::vector<Op>& g = sched.ops;
  if ((plan.host.cuda_graph || plan.host.piecewise) && plan.host.graph_launch_us > 0)
    t.slice("graph launch", "host_launch", host_tid0, 0, plan.host.graph_launch_us);
  for (OpVertex v = 0; v < sched.num_ops(); ++v) {
    const Op& op       = g[v];
    const OpRecord& r  = tl.ops[v];
    const char* name   = op_kind_name(op.kind);
    const int host_tid = host_tid0 + op.host_thread;
    js.begin_object();
    js.key("args").begin_object();
    js.key("dummy").value(op.dummy).key("issue_us").value(ns(r.issue_us));
    js.key("layer").value(op.layer).key("ubatch").value(op.ubatch).end_object();
    t.slice_body(name, is_all_to_all_part(op.kind) ? "comm" : "compute", stream_tid(op.stream), r.start_us, r.end_us);
    if (r.arrive_us > r.end_us) {
      js.begin_object();
      js.key("args").begin_object().key("layer").value(op.layer).key("ubatch").value(op.ubatch).end_object();
      t.slice_body(name, "flight", flight_tid, r.end_us, r.arrive_us);
    }
    if (r.issue_us > r.host_begin_us) {
      js.begin_object();
      js.key("args").begin_object().key("kernels").value(op.kernels);
      js.key("layer").value(op.layer).key("ubatch").value(op.ubatch).end_object();
      t.slice_body(name, "host_launch", host_tid, r.host_begin_us, r.issue_us);
    }
    if (r.sync_end_us > r.issue_us)
      t.slice("synchronize", "host_sync", host_tid, r.issue_us, r.sync_end_us);
  }
}

/** Flow arrows: producer slice -> consumer slice, for each data edge across streams (a CUDA event wait). Each end sits
 *  mid-slice so that it binds to that slice, not to a neighbour that ends or starts at the same instant. Returns the
 *  number of arrows. */
std::int64_t write_event_flows(RankTrace& t, const Schedule& sched, const Timeline& tl, std::int64_t flow_id_base)
{
  const OpDag& g             = sched.graph->dag;
  const std::vector<Op>& ops = sched.ops;
  auto mid                   = [&](OpVertex w) { return ns(0.5 * (tl.ops[w].start_us + tl.ops[w].end_us)); };
  std::int64_t ids           = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const OpVertex u = boost::source(*e, g);
    const OpVertex v = boost::target(*e, g);
    if (g[*e].kind != EdgeKind::data || ops[u].stream == ops[v].stream)
      continue;
    ++ids;
    t.flow("s", flow_id_base + ids, stream_tid(ops[u].stream), mid(u));
    t.flow("f", flow_id_base + ids, stream_tid(ops[v].stream), mid(v));
  }

  return ids;
}

/** SM partition: compute SMs for the whole step, comm SMs while an SM-holding comm kernel runs. */
void write_sm_partition(RankTrace& t, const Schedule& sched, const StepPlan& plan, const Timeline& tl)
{
  const std::vector<Op>& g = sched.ops;
  const int held           = plan.gpu.comm_sms;
  const int compute        = plan.gpu.sm_count - held;
  t.counter(0, 0, compute);
  if (held > 0)
    for (OpVertex v : sched.stream_order[static_cast<int>(StreamId::comm)])
      if (is_comm_kind(g[v].kind)) {
        t.counter(tl.ops[v].start_us, held, compute);
        t.counter(tl.ops[v].end_us, 0, compute);
      }
}

} // namespace

std::int64_t write_rank_events(JsonStream& js, const Schedule& sched, const StepPlan& plan, const Timeline& tl, int pid,
                               const std::string& process_name, std::int64_t flow_id_base)
{
  RankTrace t{js, pid};
  write_track_names(t, sched, process_name);
  write_op_slices(t, js, sched, plan, tl);
  const std::int64_t ids = write_event_flows(t, sched, tl, flow_id_base);
  write_sm_partition(t, sched, plan, tl);
  return ids;
}

void write_chrome_trace(std::ostream& out, const Schedule& sched, const StepPlan& plan, const Timeline& tl)
{
  JsonStream js(out);
  js.begin_object().key("displayTimeUnit").value("ns").key("traceEvents").begin_array();
  write_rank_events(js, sched, plan, tl, 0, "rank 0 (" + sched.name + ")", 0);
  js.end_array().end_object();
  js.finish();
}

nlohmann::json chrome_trace(const Schedule& sched, const StepPlan& plan, const Timeline& tl)
{
  std::ostringstream text;
  write_chrome_trace(text, sched, plan, tl);
  return nlohmann::json::parse(text.str());
}

} // namespace dbosim::sim

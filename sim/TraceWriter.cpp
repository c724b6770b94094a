#include "sim/TraceWriter.hpp"

#include <cmath>
#include <string>

namespace dbosim::sim {

using nlohmann::json;

static constexpr int rank_pid  = 0;
static constexpr int host_tid0 = 10;

static double ns(double us) { return std::round(us * 1e3) / 1e3; }

static int stream_tid(StreamId s) { return 1 + static_cast<int>(s); }
static constexpr int flight_tid = 1 + num_streams; // collectives in flight between their send and their recv hook

static json slice(const char* name, const char* cat, int tid, double start_us, double end_us)
{
  return json{{"ph", "X"},
              {"name", name},
              {"cat", cat},
              {"pid", rank_pid},
              {"tid", tid},
              {"ts", ns(start_us)},
              {"dur", ns(end_us - start_us)}};
}

static json thread_name(int tid, const std::string& name)
{
  return json{{"ph", "M"}, {"name", "thread_name"}, {"pid", rank_pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

json chrome_trace(const Schedule& sched, const StepPlan& plan, const Timeline& tl)
{
  json events = json::array();
  events.push_back(json{
      {"ph", "M"}, {"name", "process_name"}, {"pid", rank_pid}, {"args", {{"name", "rank 0 (" + sched.name + ")"}}}});
  events.push_back(thread_name(stream_tid(StreamId::compute), "compute stream"));
  events.push_back(thread_name(stream_tid(StreamId::comm), "comm stream"));
  const OpGraph& g = sched.graph;
  for (OpVertex v = 0; v < sched.num_ops(); ++v)
    if (g[v].flight_us > 0) {
      events.push_back(thread_name(flight_tid, "in flight (send to recv hook)"));
      break;
    }
  for (int ub = 0; ub < sched.num_ubatches; ++ub)
    events.push_back(thread_name(host_tid0 + ub, "host thread ubatch " + std::to_string(ub)));

  if ((plan.host.cuda_graph || plan.host.piecewise) && plan.host.graph_launch_us > 0)
    events.push_back(slice("graph launch", "host_launch", host_tid0, 0, plan.host.graph_launch_us));
  for (OpVertex v = 0; v < sched.num_ops(); ++v) {
    const Op& op      = g[v];
    const OpRecord& r = tl.ops[v];
    json x    = slice(op_kind_name(op.kind), is_all_to_all_part(op.kind) ? "comm" : "compute", stream_tid(op.stream),
                      r.start_us, r.end_us);
    x["args"] = {{"layer", op.layer}, {"ubatch", op.ubatch}, {"issue_us", ns(r.issue_us)}, {"dummy", op.dummy}};
    events.push_back(std::move(x));
    if (r.arrive_us > r.end_us) {
      json f    = slice(op_kind_name(op.kind), "flight", flight_tid, r.end_us, r.arrive_us);
      f["args"] = {{"layer", op.layer}, {"ubatch", op.ubatch}};
      events.push_back(std::move(f));
    }
    const int host_tid = host_tid0 + op.host_thread;
    if (r.issue_us > r.host_begin_us) {
      json h    = slice(op_kind_name(op.kind), "host_launch", host_tid, r.host_begin_us, r.issue_us);
      h["args"] = {{"layer", op.layer}, {"ubatch", op.ubatch}, {"kernels", op.kernels}};
      events.push_back(std::move(h));
    }
    if (r.sync_end_us > r.issue_us)
      events.push_back(slice("synchronize", "host_sync", host_tid, r.issue_us, r.sync_end_us));
  }

  // Flow arrows: producer slice -> consumer slice, for each data edge across streams (a CUDA event wait). Each end sits
  // mid-slice so that it binds to that slice, not to a neighbour that ends or starts at the same instant.
  auto mid    = [&](OpVertex w) { return ns(0.5 * (tl.ops[w].start_us + tl.ops[w].end_us)); };
  int flow_id = 0;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    const OpVertex u = boost::source(*e, g);
    const OpVertex v = boost::target(*e, g);
    if (g[*e].kind != EdgeKind::data || g[u].stream == g[v].stream)
      continue;
    ++flow_id;
    events.push_back(json{{"ph", "s"},
                          {"name", "event"},
                          {"cat", "wait"},
                          {"id", flow_id},
                          {"pid", rank_pid},
                          {"tid", stream_tid(g[u].stream)},
                          {"ts", mid(u)}});
    events.push_back(json{{"ph", "f"},
                          {"bp", "e"},
                          {"name", "event"},
                          {"cat", "wait"},
                          {"id", flow_id},
                          {"pid", rank_pid},
                          {"tid", stream_tid(g[v].stream)},
                          {"ts", mid(v)}});
  }

  // SM partition: compute SMs for the whole step, comm SMs while an SM-holding comm kernel runs.
  const int held    = plan.gpu.comm_sms;
  const int compute = plan.gpu.sm_count - held;
  auto counter      = [&](double ts, int comm_sms) {
    events.push_back(json{{"ph", "C"},
                          {"name", "SM partition"},
                          {"pid", rank_pid},
                          {"ts", ns(ts)},
                          {"args", {{"compute_sms", compute}, {"comm_sms", comm_sms}}}});
  };
  counter(0, 0);
  if (held > 0)
    for (OpVertex v : sched.stream_order[static_cast<int>(StreamId::comm)])
      if (is_comm_kind(g[v].kind)) {
        counter(tl.ops[v].start_us, held);
        counter(tl.ops[v].end_us, 0);
      }
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

} // namespace dbosim::sim

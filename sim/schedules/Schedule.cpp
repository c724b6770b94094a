#include "sim/schedules/Schedule.hpp"

#include "sim/schedules/OpGraph.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

namespace dbosim::sim {

Schedule::Schedule() : graph(std::make_shared<const OpGraph>()) {}

namespace {
/** An op's numbers from its spec in the plan (the rest of the op is where and when it is issued). */
void set_numbers(Op& op, const OpSpec& spec, bool dummy)
{
  op.duration_us             = spec.duration_us;
  op.partitioned_duration_us = spec.partitioned_duration_us;
  op.kernels                 = spec.kernels;
  op.eager_kernels           = spec.eager_kernels;
  op.graph_launches          = spec.graph_launches;
  op.flight_us               = spec.flight_us;
  op.dummy                   = dummy;
}
} // namespace

void set_op_numbers(Schedule& sched, const StepPlan& plan)
{
  sched.step_work_us = plan.step_work_us;
  for (Op& op : sched.ops) {
    const OpSpec* spec = op.ubatch < plan.num_ubatches() && op.layer < plan.num_layers
                             ? plan.ubatches[op.ubatch].find(plan.moe_layer(op.layer), op.kind)
                             : nullptr;
    if (spec == nullptr)
      throw InternalError(fmt::format("schedule {}: the plan has no {} in layer {} ubatch {}", sched.name,
                                      op_kind_name(op.kind), op.layer, op.ubatch));
    set_numbers(op, *spec, plan.ubatches[op.ubatch].real_tokens == 0);
  }
}

ScheduleBuilder::ScheduleBuilder(const StepPlan& plan, std::string name)
    : plan_(plan), graph_(std::make_shared<OpGraph>())
{
  sched_.graph        = graph_;
  sched_.name         = std::move(name);
  sched_.num_layers   = plan.num_layers;
  sched_.num_ubatches = plan.num_ubatches();
  sched_.step_work_us = plan.step_work_us;
  issued_.assign(static_cast<std::size_t>(plan.num_ubatches() * plan.num_layers * num_op_kinds), 0);
}

int& ScheduleBuilder::slot(int ub, int layer, OpKind k)
{
  return issued_[static_cast<std::size_t>((ub * plan_.num_layers + layer) * num_op_kinds + static_cast<int>(k))];
}

bool ScheduleBuilder::has(int ub, int layer, OpKind k) const
{
  return layer >= 0 && plan_.ubatches[ub].find(plan_.moe_layer(layer), k) != nullptr;
}

void ScheduleBuilder::add_dep(OpVertex consumer, int ub, int layer, OpKind k)
{
  if (!has(ub, layer, k))
    return; // the producer does not exist (first layer, no shared expert, dense layer)
  int producer = slot(ub, layer, k);
  if (producer == 0)
    throw InternalError(fmt::format("schedule {}: {} of layer {} ubatch {} issued before its producer {}", sched_.name,
                                    op_kind_name(sched_.ops[consumer].kind), sched_.ops[consumer].layer, ub,
                                    op_kind_name(k)));
  boost::add_edge(static_cast<OpVertex>(producer - 1), consumer, OpEdge{EdgeKind::data}, graph_->dag);
}

void ScheduleBuilder::issue(OpKind k, int layer, int ub, StreamId s)
{
  issue_on_thread(k, layer, ub, s, ub);
  if (is_comm_kind(k) && !explicit_hooks_)
    issue_on_thread(recv_hook_of(k), layer, ub, s, ub);
}

void ScheduleBuilder::issue_after_tail(OpKind k, int layer, int ub, StreamId s, StreamId tail)
{
  const auto& fifo = sched_.stream_order[static_cast<int>(tail)];
  if (fifo.empty()) {
    issue(k, layer, ub, s);
    return;
  }
  const OpVertex last    = fifo.back();
  const std::size_t size = sched_.issue_order.size();
  issue(k, layer, ub, s);
  if (sched_.issue_order.size() == size)
    return; // the layer has no such op
  const OpVertex v = sched_.issue_order[size];
  if (!boost::edge(last, v, graph_->dag).second)
    boost::add_edge(last, v, OpEdge{EdgeKind::data}, graph_->dag);
}

void ScheduleBuilder::issue_recv_hook(OpKind k, int layer, int ub, StreamId s, int host_thread)
{
  if (!is_comm_kind(k))
    throw InternalError(fmt::format("schedule {}: a recv hook of {}", sched_.name, op_kind_name(k)));
  issue_on_thread(recv_hook_of(k), layer, ub, s, host_thread);
}

void ScheduleBuilder::issue_on_thread(OpKind k, int layer, int ub, StreamId s, int host_thread)
{
  if (layer < 0 || layer >= plan_.num_layers || ub < 0 || ub >= plan_.num_ubatches())
    throw InternalError(
        fmt::format("schedule {}: op {} layer {} ubatch {} out of range", sched_.name, op_kind_name(k), layer, ub));
  const bool moe     = plan_.moe_layer(layer);
  const OpSpec* spec = plan_.ubatches[ub].find(moe, k);
  if (spec == nullptr)
    return;
  if (slot(ub, layer, k) != 0)
    throw InternalError(
        fmt::format("schedule {}: {} of layer {} ubatch {} issued twice", sched_.name, op_kind_name(k), layer, ub));
  Op op;
  op.kind        = k;
  op.layer       = layer;
  op.ubatch      = ub;
  op.stream      = s;
  op.host_thread = host_thread;
  op.issue_index = static_cast<int>(sched_.issue_order.size());
  set_numbers(op, *spec, plan_.ubatches[ub].real_tokens == 0);
  const OpVertex v = boost::add_vertex(graph_->dag);
  sched_.ops.push_back(std::move(op));

  switch (k) {
  case OpKind::A0:
    if (plan_.moe_layer(layer - 1)) {
      add_dep(v, ub, layer - 1, has(ub, layer - 1, OpKind::C_recv) ? OpKind::C_recv : OpKind::C);
      add_dep(v, ub, layer - 1, OpKind::S);
    } else {
      add_dep(v, ub, layer - 1, OpKind::MLP);
    }
    break;
  case OpKind::A1:
    add_dep(v, ub, layer, OpKind::A0);
    break;
  case OpKind::D:
  case OpKind::S:
    add_dep(v, ub, layer, OpKind::A1);
    break;
  case OpKind::MLP:
    add_dep(v, ub, layer, !moe ? OpKind::A1 : has(ub, layer, OpKind::D_recv) ? OpKind::D_recv : OpKind::D);
    break;
  case OpKind::C:
    add_dep(v, ub, layer, OpKind::MLP);
    break;
  case OpKind::D_recv:
    add_dep(v, ub, layer, OpKind::D);
    break;
  case OpKind::C_recv:
    add_dep(v, ub, layer, OpKind::C);
    break;
  }
  auto& fifo = sched_.stream_order[static_cast<int>(s)];
  if (!fifo.empty())
    boost::add_edge(fifo.back(), v, OpEdge{EdgeKind::stream}, graph_->dag);
  fifo.push_back(v);
  sched_.issue_order.push_back(v);
  slot(ub, layer, k) = static_cast<int>(v) + 1;
}

void ScheduleBuilder::issue_serial_layer(int layer, int ub, StreamId comm_stream)
{
  for (OpKind k : {OpKind::A0, OpKind::A1, OpKind::D, OpKind::MLP, OpKind::S, OpKind::C})
    issue(k, layer, ub, is_comm_kind(k) ? comm_stream : StreamId::compute);
}

Schedule ScheduleBuilder::finish()
{
  // Every op of the plan must have been issued exactly once.
  for (int ub = 0; ub < plan_.num_ubatches(); ++ub)
    for (int layer = 0; layer < plan_.num_layers; ++layer)
      for (const OpSpec& spec : plan_.moe_layer(layer) ? plan_.ubatches[ub].moe : plan_.ubatches[ub].dense)
        if (slot(ub, layer, spec.kind) == 0)
          throw InternalError(fmt::format("schedule {}: {} of layer {} ubatch {} never issued", sched_.name,
                                          op_kind_name(spec.kind), layer, ub));
  graph_.reset(); // the schedule's graph is complete: no edge is added after this
  return std::move(sched_);
}

} // namespace dbosim::sim

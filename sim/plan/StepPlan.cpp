#include "sim/plan/StepPlan.hpp"

#include "base/InputError.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dbosim::sim {

const OpSpec* UbatchCosts::find(bool moe_layer, OpKind k) const
{
  for (const OpSpec& op : moe_layer ? moe : dense)
    if (op.kind == k)
      return &op;
  return nullptr;
}

OpSpec* find_spec(std::vector<OpSpec>& ops, OpKind k)
{
  auto it = std::find_if(ops.begin(), ops.end(), [k](const OpSpec& o) { return o.kind == k; });
  return it == ops.end() ? nullptr : &*it;
}

void set_collective_us(std::vector<OpSpec>& ops, OpKind k, double total_us, double recv_us)
{
  OpSpec* send = find_spec(ops, k);
  if (!send)
    return;
  OpSpec* hook = find_spec(ops, recv_hook_of(k));
  if (!hook) {
    send->duration_us = send->partitioned_duration_us = total_us;
    return;
  }
  if (!(recv_us >= 0) || !(recv_us <= total_us))
    throw InternalError(
        fmt::format("{}: a receive kernel of {} us in a collective of {} us", op_kind_name(k), recv_us, total_us));
  send->duration_us = send->partitioned_duration_us = 0;
  send->flight_us                                   = total_us - recv_us;
  hook->duration_us = hook->partitioned_duration_us = recv_us;
}

void split_recv_hook(std::vector<OpSpec>& ops, OpKind k, double recv_us)
{
  OpSpec* send = find_spec(ops, k);
  if (!send || find_spec(ops, recv_hook_of(k)))
    return;
  const double total_us = send->duration_us;
  send->kernels         = std::max(1, send->kernels - 1);
  OpSpec hook;
  hook.kind = recv_hook_of(k);
  if (send->eager_kernels > 0) { // the recv kernel is launched as the send was (eager under piecewise graphs)
    --send->eager_kernels;
    hook.eager_kernels = 1;
  }
  ops.insert(ops.begin() + (send - ops.data()) + 1, hook);
  set_collective_us(ops, k, total_us, recv_us);
}

} // namespace dbosim::sim

#include "validate/TestbedPlan.hpp"

#include "base/InputError.hpp"
#include "models/KernelCost.hpp"
#include "models/OpTables.hpp"
#include "sim/schedules/OpGraph.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dbosim::validate {

using models::OpKind;

std::string testbed_case_name(const TestbedShape& s, const TestbedVariant& v) { return s.name + "__" + v.name; }

static const GemmDims& dims_of(const TestbedShape& s, OpKind k)
{
  switch (k) {
  case OpKind::A0:
    return s.a0;
  case OpKind::A1:
    return s.a1;
  case OpKind::MLP:
    return s.mlp;
  case OpKind::S:
    return s.s;
  default:
    throw InternalError("testbed: no GEMM for a comm op");
  }
}

static int ubatches_of(const TestbedVariant& v) { return sim::schedule_traits_of(v.schedule).num_ubatches; }

static sim::OpSpec compute_spec(const TestbedShape& s, OpKind k, int tokens, const models::HwProfile& hw,
                                const std::string& family, int compute_sms)
{
  const GemmDims& d    = dims_of(s, k);
  models::KernelWork w = models::gemm_kernel(models::op_name(k), tokens, d.n, d.k, models::DType::bf16);
  if (w.table_family != family || !models::find_table(hw, family, w.table_dims))
    throw InputError(
        "", 0, 0, s.name,
        fmt::format("profile {} has no measured table {}", hw.name, models::table_key(family, w.table_dims)));
  const models::OpCost c = models::sum_kernels(hw, k, "gemm", {w});
  const double part      = compute_sms < hw.sm_count ? models::duration_on_sms_us(hw, c, compute_sms) : c.duration_us;
  return sim::OpSpec{k, c.duration_us, part, 1};
}

static sim::OpSpec comm_spec(const TestbedShape& s, OpKind k, int tokens, const models::HwProfile& hw)
{
  if (hw.comm_kernel_bytes_per_s_by_sms.empty())
    throw InputError("", 0, 0, "comm_kernel", "profile " + hw.name + " has no copy-kernel bandwidth curve");
  const double bw = models::speed_at_sms(hw.comm_kernel_bytes_per_s_by_sms, s.comm_ctas);
  const double us = tokens * s.comm_bytes_per_token / bw * 1e6;
  return sim::OpSpec{k, us, us, 1};
}

sim::StepPlan testbed_step_plan(const TestbedShape& s, const TestbedVariant& v, const models::HwProfile& hw,
                                const std::string& gemm_family)
{
  sim::StepPlan plan;
  plan.schedule         = v.schedule;
  plan.num_layers       = s.layers;
  plan.first_k_dense    = 0;
  const int ub          = ubatches_of(v);
  const int tokens      = s.tokens / ub;
  const int compute_sms = v.partition ? hw.sm_count - s.comm_ctas : hw.sm_count;
  for (int u = 0; u < ub; ++u) {
    sim::UbatchCosts c;
    c.tokens      = tokens;
    c.real_tokens = tokens;
    for (OpKind k : {OpKind::A0, OpKind::A1, OpKind::D, OpKind::MLP, OpKind::S, OpKind::C})
      c.moe.push_back(sim::is_comm_kind(k) ? comm_spec(s, k, tokens, hw)
                                           : compute_spec(s, k, tokens, hw, gemm_family, compute_sms));
    c.dense = {c.moe[0], c.moe[1], c.moe[3]};
    plan.ubatches.push_back(std::move(c));
  }
  plan.host.cuda_graph               = true; // the testbed's host issues the step behind a gate: no launch cost
  plan.host.kernel_gap_us            = hw.graph_replay_kernel_us;
  plan.gpu.sm_count                  = hw.sm_count;
  plan.gpu.comm_sms                  = v.partition ? s.comm_ctas : 0;
  plan.gpu.comm_uses_sms             = true;
  plan.gpu.interference_shared       = hw.interference.compute_with_comm.value_or(1.0);
  plan.gpu.interference_partitioned  = hw.interference.compute_with_comm_partitioned.value_or(1.0);
  plan.gpu.comm_slowdown_shared      = hw.interference.comm_with_compute.value_or(1.0);
  plan.gpu.comm_slowdown_partitioned = hw.interference.comm_with_compute_partitioned.value_or(1.0);
  // The copy CTA reserves DeepEP's shared memory: one per SM and no GEMM CTA beside it (the testbed log records
  // cudaOccupancyMaxActiveBlocksPerMultiprocessor = 1 on the H200).
  plan.gpu.comm_needs_whole_sms = s.comm_smem_bytes > 0;
  return plan;
}

std::string testbed_plan_text(const TestbedShape& s, const TestbedVariant& v, const sim::Schedule& sched,
                              const models::HwProfile& hw)
{
  const int ub     = ubatches_of(v);
  const int tokens = s.tokens / ub;
  std::string out  = fmt::format("# dbosim overlap-testbed plan: shape {}, schedule {}{}, {} micro-batch(es) of {} "
                                  "tokens; written by `dbosim validate --write-testbed-plans`\n",
                                 s.name, sim::schedule_name(v.schedule),
                                v.partition ? " on a green-context partition" : "", ub, tokens);
  out += fmt::format("name {}\npartition_compute_sms {}\ncomm_priority {}\ncomm_smem_bytes {}\n",
                     testbed_case_name(s, v), v.partition ? hw.sm_count - s.comm_ctas : 0,
                     v.comm_high_priority ? "high" : "default", s.comm_smem_bytes);
  std::vector<int> id_of(sched.num_ops(), -1);
  for (std::size_t i = 0; i < sched.issue_order.size(); ++i)
    id_of[sched.issue_order[i]] = static_cast<int>(i);
  for (std::size_t i = 0; i < sched.issue_order.size(); ++i) {
    const sim::OpVertex vtx = sched.issue_order[i];
    const sim::Op& op       = sched.ops[vtx];
    out += fmt::format("op {} {} {} {} {} ", i, sim::op_kind_name(op.kind), op.layer, op.ubatch,
                       static_cast<int>(op.stream));
    if (sim::is_comm_kind(op.kind))
      out += fmt::format("copy {:.0f} {}", tokens * s.comm_bytes_per_token, s.comm_ctas);
    else
      out += fmt::format("gemm {} {} {}", tokens, dims_of(s, op.kind).n, dims_of(s, op.kind).k);
    out += " waits";
    for (auto [e, end] = boost::in_edges(vtx, sched.graph->dag); e != end; ++e) {
      const sim::OpVertex src = boost::source(*e, sched.graph->dag);
      if (sched.graph->dag[*e].kind == sim::EdgeKind::data && sched.ops[src].stream != op.stream)
        out += fmt::format(" {}", id_of[src]);
    }
    out += "\n";
  }
  return out;
}

std::string testbed_op_name(const std::string& kind, int layer, int ubatch)
{
  return fmt::format("L{}.u{}.{}", layer, ubatch, kind);
}

TestbedOps testbed_ops_of(const TestbedShape& s, const TestbedVariant& v, const sim::Schedule& sched,
                          const models::HwProfile& hw)
{
  const int tokens = s.tokens / ubatches_of(v);
  TestbedOps t;
  t.name                  = testbed_case_name(s, v);
  t.profile               = hw.name;
  t.partition_compute_sms = v.partition ? hw.sm_count - s.comm_ctas : 0;
  t.partition_comm_sms    = v.partition ? s.comm_ctas : 0;
  t.comm_high_priority    = v.comm_high_priority;
  std::vector<int> index_of(sched.num_ops(), -1);
  for (sim::OpVertex vtx : sched.issue_order) {
    const sim::Op& op = sched.ops[vtx];
    TestbedOp o;
    o.name   = testbed_op_name(sim::op_kind_name(op.kind), op.layer, op.ubatch);
    o.stream = op.stream;
    o.ubatch = op.ubatch;
    for (auto [e, end] = boost::in_edges(vtx, sched.graph->dag); e != end; ++e)
      if (sched.graph->dag[*e].kind == sim::EdgeKind::data)
        o.depends_on.push_back(index_of[boost::source(*e, sched.graph->dag)]);
    std::sort(o.depends_on.begin(), o.depends_on.end());
    if (sim::is_comm_kind(op.kind)) {
      o.kernel.kind               = TestbedKernelKind::copy;
      o.kernel.bytes              = tokens * s.comm_bytes_per_token;
      o.kernel.ctas               = s.comm_ctas;
      o.kernel.smem_bytes_per_cta = s.comm_smem_bytes;
    } else {
      const GemmDims& d = dims_of(s, op.kind);
      o.kernel.kind     = TestbedKernelKind::gemm;
      o.kernel.m        = tokens;
      o.kernel.n        = d.n;
      o.kernel.k        = d.k;
      o.kernel.dtype    = models::DType::bf16;
    }
    index_of[vtx] = static_cast<int>(t.ops.size());
    t.ops.push_back(std::move(o));
  }
  return t;
}

} // namespace dbosim::validate

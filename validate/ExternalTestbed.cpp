#include "validate/ExternalTestbed.hpp"

#include "base/ChildProcess.hpp"
#include "base/InputError.hpp"
#include "models/KernelCost.hpp"
#include "models/OpTables.hpp"
#include "sim/engine/RunStep.hpp"
#include "sim/schedules/OpGraph.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace dbosim::validate {

namespace {

/* One rank's all-to-all. Alone (one participant) it is a device-local copy: the bytes sent are read and the bytes
 * received written at the profile's HBM bandwidth. Among n ranks of one NVLink domain every rank is assumed to do the
 * same (the list is SPMD): the (n-1)/n share of the larger direction crosses NVLink at the profile's per-GPU
 * bandwidth after its latency, the 1/n share to itself is a local copy; no congestion, skew or straggler (the cluster
 * engine's), so every rank's program replays alike. */
sim::OpSpec price_all_to_all(const TestbedOps& t, const TestbedOp& op, const models::HwProfile& hw)
{
  const TestbedKernel& k = op.kernel;
  const double n         = static_cast<double>(k.ranks.size());
  if (hw.hbm_bytes_per_s <= 0)
    throw InputError(t.file, op.line, 0, "kernel", "profile " + hw.name + " has no HBM bandwidth (hbm_bytes_per_s)");
  double us = (k.bytes + k.recv_bytes) / n / hw.hbm_bytes_per_s * 1e6;
  if (k.ranks.size() > 1) {
    if (hw.nvlink_bytes_per_s <= 0)
      throw InputError(t.file, op.line, 0, "kernel", "profile " + hw.name + " has no NVLink bandwidth");
    if (hw.nvlink_domain_size > 0 && static_cast<int>(k.ranks.size()) > hw.nvlink_domain_size)
      throw InputError(t.file, op.line, 0, "ranks",
                       fmt::format("{} ranks span more than one NVLink domain of profile {} ({} GPUs): scale-out "
                                   "all-to-all is not priced here",
                                   k.ranks.size(), hw.name, hw.nvlink_domain_size),
                       fmt::format("<= {} ranks", hw.nvlink_domain_size));
    us += hw.nvlink_latency_us + std::max(k.bytes, k.recv_bytes) * (n - 1) / n / hw.nvlink_bytes_per_s * 1e6;
  }
  return sim::OpSpec{models::OpKind::D, us, us, 1};
}

/** A copy kernel's duration in waves. Its CTAs may sit on `sms` SMs (the comm side of a partition, else the GPU);
 *  one that reserves shared memory fits smem_per_sm / smem_bytes_per_cta times on an SM, so at most that many times
 *  `sms` are resident and the rest wait for a wave to finish. A wave of w CTAs, spread one per SM first, moves its
 *  w / ctas share of the bytes at the bandwidth curve's speed on min(w, sms) SMs. A copy without a reservation is
 *  one wave on at most `sms` SMs (the curve is measured one CTA per SM). */
double copy_us(const TestbedOps& t, const TestbedOp& op, const models::HwProfile& hw, int sms)
{
  const TestbedKernel& k = op.kernel;
  if (hw.comm_kernel_bytes_per_s_by_sms.empty())
    throw InputError(t.file, op.line, 0, "kernel", "profile " + hw.name + " has no copy-kernel bandwidth curve");
  if (k.smem_bytes_per_cta == 0)
    return k.bytes / models::speed_at_sms(hw.comm_kernel_bytes_per_s_by_sms, std::min(k.ctas, sms)) * 1e6;
  if (hw.smem_bytes_per_sm <= 0)
    throw InputError(t.file, k.smem_line, k.smem_col, "smem_bytes_per_cta",
                     fmt::format("profile {} gives no smem_per_sm, so CTAs that reserve shared memory cannot be "
                                 "placed on its SMs",
                                 hw.name),
                     "0, or a profile with smem_per_sm");
  if (k.smem_bytes_per_cta > hw.smem_bytes_per_sm)
    throw InputError(t.file, k.smem_line, k.smem_col, "smem_bytes_per_cta",
                     fmt::format("{} B per CTA exceed the {} B of shared memory an SM of profile {} holds: no CTA "
                                 "could run",
                                 k.smem_bytes_per_cta, hw.smem_bytes_per_sm, hw.name),
                     fmt::format("0..{}", hw.smem_bytes_per_sm));
  const int resident = sms * (hw.smem_bytes_per_sm / k.smem_bytes_per_cta);
  double us          = 0;
  for (int left = k.ctas; left > 0; left -= resident) {
    const int wave = std::min(left, resident);
    us += k.bytes * wave / k.ctas / models::speed_at_sms(hw.comm_kernel_bytes_per_s_by_sms, std::min(wave, sms)) * 1e6;
  }
  return us;
}

sim::OpSpec price(const TestbedOps& t, const TestbedOp& op, const models::HwProfile& hw, int compute_sms, int comm_sms)
{
  const TestbedKernel& k = op.kernel;
  if (k.kind == TestbedKernelKind::all_to_all)
    return price_all_to_all(t, op, hw);
  if (k.kind == TestbedKernelKind::copy) {
    const double us = copy_us(t, op, hw, comm_sms);
    return sim::OpSpec{models::OpKind::D, us, us, 1};
  }
  models::KernelWork w;
  std::string family = "gemm";
  switch (k.kind) {
  case TestbedKernelKind::gemm:
    w = models::gemm_kernel(op.name, k.m, k.n, k.k, k.dtype);
    break;
  case TestbedKernelKind::batched_gemm: // `batch` matrices [m x k] x [k x n], each with its own operands
    w = models::head_bmm_kernel(op.name, k.m, k.batch, k.n, k.k, k.dtype);
    break;
  case TestbedKernelKind::grouped_gemm: // `groups` groups of m rows, each with its own weights, all of them active
    w      = models::grouped_gemm_kernel(op.name, double(k.batch) * k.m, k.batch, k.batch, k.n, k.k, k.dtype);
    family = "grouped_gemm";
    break;
  case TestbedKernelKind::copy:
  case TestbedKernelKind::all_to_all:
    break;
  }
  models::OpCost c;
  try {
    c = models::sum_kernels(hw, models::OpKind::A0, family, {w});
  } catch (const std::invalid_argument& e) {
    throw InputError(t.file, op.line, 0, "kernel", fmt::format("profile {} cannot price it: {}", hw.name, e.what()));
  }
  const double part = compute_sms < hw.sm_count ? models::duration_on_sms_us(hw, c, compute_sms) : c.duration_us;
  return sim::OpSpec{models::OpKind::A0, c.duration_us, part, 1};
}

std::string simulate_here(const sim::StepPlan& plan, const sim::Schedule& sched)
{
  const sim::Timeline tl = sim::run_step(plan, sched).timeline;
  nlohmann::json out     = nlohmann::json::array();
  for (sim::OpVertex v = 0; v < sched.num_ops(); ++v)
    out.push_back({tl.ops[v].start_us, tl.ops[v].end_us});
  return out.dump();
}

} // namespace

sim::StepPlan external_step_plan(const TestbedOps& t, const models::HwProfile& hw, std::vector<sim::OpSpec>& specs)
{
  const bool partition = t.partition_compute_sms > 0;
  if (partition && t.partition_compute_sms + t.partition_comm_sms > hw.sm_count)
    throw InputError(t.file, 0, 0, "partition",
                     fmt::format("compute_sms {} + comm_sms {} exceed the {} SMs of profile {}",
                                 t.partition_compute_sms, t.partition_comm_sms, hw.sm_count, hw.name),
                     fmt::format("<= {}", hw.sm_count));
  const int compute_sms = partition ? t.partition_compute_sms : hw.sm_count;
  specs.clear();
  int smem_copies = 0, copies = 0;
  for (const TestbedOp& op : t.ops) {
    specs.push_back(price(t, op, hw, compute_sms, partition ? t.partition_comm_sms : hw.sm_count));
    if (op.kernel.kind == TestbedKernelKind::copy) {
      ++copies;
      smem_copies += op.kernel.smem_bytes_per_cta > 0;
    }
  }
  // The engine holds one residency rule for every comm kernel of a step.
  if (smem_copies > 0 && smem_copies < copies)
    throw InputError(t.file, 0, 0, "smem_bytes_per_cta",
                     "copy kernels must all reserve shared memory or none (the engine models one residency rule)");
  sim::StepPlan plan; // its schedule is external_schedule's, not a table row: plan.schedule is not read
  plan.num_layers                    = 1;
  plan.host.cuda_graph               = true; // issued ahead of the GPU behind a gate: no launch cost
  plan.host.kernel_gap_us            = hw.graph_replay_kernel_us;
  plan.gpu.sm_count                  = hw.sm_count;
  plan.gpu.comm_sms                  = partition ? t.partition_comm_sms : 0;
  plan.gpu.comm_uses_sms             = true;
  plan.gpu.interference_shared       = hw.interference.compute_with_comm.value_or(1.0);
  plan.gpu.interference_partitioned  = hw.interference.compute_with_comm_partitioned.value_or(1.0);
  plan.gpu.comm_slowdown_shared      = hw.interference.comm_with_compute.value_or(1.0);
  plan.gpu.comm_slowdown_partitioned = hw.interference.comm_with_compute_partitioned.value_or(1.0);
  // A copy CTA with reserved shared memory (DeepEP's 196608 B) leaves no room for a GEMM CTA on its SM.
  plan.gpu.comm_needs_whole_sms = smem_copies > 0;
  return plan;
}

sim::Schedule external_schedule(const TestbedOps& t, const std::vector<sim::OpSpec>& specs)
{
  sim::Schedule s;
  s.name         = t.name;
  s.num_layers   = 1;
  s.num_ubatches = std::max(1, t.num_ubatches());
  auto graph     = std::make_shared<sim::OpGraph>();
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const TestbedOp& src = t.ops[i];
    sim::Op op;
    op.kind                    = specs[i].kind;
    op.ubatch                  = src.ubatch;
    op.stream                  = src.stream;
    op.host_thread             = src.ubatch;
    op.issue_index             = static_cast<int>(i);
    op.duration_us             = specs[i].duration_us;
    op.partitioned_duration_us = specs[i].partitioned_duration_us;
    op.kernels                 = specs[i].kernels;
    const sim::OpVertex v      = boost::add_vertex(graph->dag);
    s.ops.push_back(op);
    for (int d : src.depends_on)
      boost::add_edge(static_cast<sim::OpVertex>(d), v, sim::OpEdge{sim::EdgeKind::data}, graph->dag);
    auto& fifo = s.stream_order[static_cast<int>(src.stream)];
    if (!fifo.empty())
      boost::add_edge(fifo.back(), v, sim::OpEdge{sim::EdgeKind::stream}, graph->dag);
    fifo.push_back(v);
    s.issue_order.push_back(v);
  }
  s.graph = std::move(graph);
  return s;
}

ExternalPrediction predict_external(const TestbedOps& t, const models::HwProfile& hw)
{
  std::vector<sim::OpSpec> specs;
  const sim::StepPlan plan     = external_step_plan(t, hw, specs);
  const sim::Schedule sched    = external_schedule(t, specs);
  const sim::ChildResult child = sim::run_in_child([&] { return simulate_here(plan, sched); });
  if (!child.ok() || child.payload.empty())
    throw InternalError(fmt::format("validate: the engine child failed for testbed {} ({}): {}", t.name,
                                    sim::child_outcome_name(child.outcome), child.message));
  ExternalPrediction p;
  double lo = 1e300, hi = -1e300;
  for (const auto& o : nlohmann::json::parse(child.payload)) {
    p.span_us.emplace_back(o[0].get<double>(), o[1].get<double>());
    lo = std::min(lo, p.span_us.back().first);
    hi = std::max(hi, p.span_us.back().second);
  }
  p.makespan_us = p.span_us.empty() ? 0 : hi - lo;
  return p;
}

std::vector<CaseResult> compare_external(const TestbedOps& t, const ExternalPrediction& p, const OpRecording& rec,
                                         double makespan_tolerance_pct, const std::string& source)
{
  std::vector<CaseResult> rows;
  rows.push_back({"external_makespan", t.name, "makespan", "us", p.makespan_us, rec.median_makespan_us(),
                  makespan_tolerance_pct, source, "", ""});
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    rows.push_back({"external_op", t.name, t.ops[i].name, "us", p.span_us[i].second - p.span_us[i].first,
                    rec.median_duration_us(t.ops[i].name), 0, source, "", ""});
  return rows;
}

} // namespace dbosim::validate

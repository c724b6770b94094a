#include "sim/plan/StepPlanBuilder.hpp"

#include "base/InputError.hpp"
#include "config/EngineTable.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace dbosim::sim {

using models::Phase;

/* Piecewise CUDA graphs (vLLM's PIECEWISE mode, vllm/compilation/backends.py: split_graph cuts the model's FX graph
 * at every splitting op; each piece between two is captured and replayed as one CUDA graph, the splitting op runs
 * eagerly): the kernels of a splitting op (models::GraphSplit: attention always, the fused-MoE op where the backend
 * makes it one) are eager; every run of captured kernels that follows one is a piece, one graph launch. The layer
 * repeats, so the launch before a layer's first op is its own last one (a cycle); the piece that holds the step's
 * first layers' head (embedding ...) is the step's own first launch (host_loop). */
static void count_pieces(const models::LayerCosts& lc, std::vector<OpSpec>& specs, bool split_moe)
{
  auto is_split = [split_moe](models::GraphSplit g) {
    return g == models::GraphSplit::attention || (split_moe && g == models::GraphSplit::moe);
  };
  auto launches = [](const models::OpCost& c) {
    if (!c.launch_split.empty() && static_cast<int>(c.launch_split.size()) != c.kernels)
      throw InternalError(
          fmt::format("{}: {} launches but {} split tags", op_kind_name(c.kind), c.kernels, c.launch_split.size()));
    return c.launch_split.empty() ? std::vector<models::GraphSplit>(std::max(0, c.kernels), models::GraphSplit::none)
                                  : c.launch_split;
  };
  bool prev_split = false; // the layer's last launch, as the one before its first
  for (const models::OpCost& c : lc.ops)
    for (models::GraphSplit g : launches(c))
      prev_split = is_split(g);
  for (std::size_t i = 0; i < lc.ops.size(); ++i)
    for (models::GraphSplit g : launches(lc.ops[i])) {
      const bool sp = is_split(g);
      if (sp)
        ++specs[i].eager_kernels;
      else if (prev_split)
        ++specs[i].graph_launches;
      prev_split = sp;
    }
}

/* `recv_hooks`: D and C whose model separates a receive kernel run as send + recv hook. `piecewise`: count each op's
 * eager kernels and graph launches (count_pieces), the fused-MoE op a splitting op when `split_moe`. */
static std::vector<OpSpec> to_specs(const models::LayerCosts& lc, const CostSource& costs, int compute_sms,
                                    bool partition, bool recv_hooks, bool piecewise, bool split_moe)
{
  std::vector<OpSpec> out;
  for (const models::OpCost& c : lc.ops) {
    OpSpec s{c.kind, c.duration_us, c.duration_us, c.kernels};
    if (partition && !is_comm_kind(c.kind))
      s.partitioned_duration_us = costs.on_sms(c, compute_sms);
    if (!std::isfinite(s.duration_us) || s.duration_us < 0 || !std::isfinite(s.partitioned_duration_us) ||
        s.partitioned_duration_us < 0 || s.kernels < 0)
      throw InternalError(fmt::format("cost model gave {} a duration of {} us ({} on {} SMs, {} kernels)",
                                      op_kind_name(c.kind), c.duration_us, s.partitioned_duration_us, compute_sms,
                                      c.kernels));
    out.push_back(s);
  }
  if (piecewise)
    count_pieces(lc, out, split_moe);
  if (recv_hooks)
    for (const models::OpCost& c : lc.ops)
      if (is_comm_kind(c.kind) && c.recv_us > 0)
        split_recv_hook(out, c.kind, c.recv_us);
  return out;
}

static double interference(const models::HwProfile& hw, std::optional<double> models::Interference::*factor,
                           StepPlan& plan)
{
  if (const std::optional<double>& f = hw.interference.*factor)
    return *f;
  for (const auto& [key, member] : models::Interference::keys)
    if (member == factor)
      plan.notes.push_back(fmt::format("profile {} has no interference.{}: factor 1 (no slowdown)", hw.name, key));
  return 1.0;
}

/** Micro-batch shape: tokens [start, start + len) of the padded step `w`, as vLLM's ubatch slices cut it (at token
 *  granularity, the batch ordered decodes first: a mixed step's decoding requests fall in the first slices). Each
 *  part keeps its requests in proportion to its tokens. One prompt request split over slices attends over the
 *  context before its slice plus its own tokens, so the first slice sees the shortest context; slices of padding keep
 *  the full context (at least their length). */
static models::StepShape ubatch_shape(const models::StepShape& w, int padded, int start, int len, int nub)
{
  const models::StepShape prompts = models::prompt_part(w);
  const int d_tok                 = std::clamp(w.decode_tokens - start, 0, len);
  const int p_tok                 = len - d_tok;
  const int p_padded              = padded - w.decode_tokens; // the prompt part carries the DP padding
  models::StepShape shape;
  const bool decodes_only = d_tok > 0 && p_tok == 0;
  shape.phase             = decodes_only ? Phase::decode : w.phase;
  shape.tokens            = len;
  shape.context_len       = decodes_only ? w.decode_context_len : w.context_len;
  // Prompt requests in proportion to the slice's prompt tokens, and at least as many as hold them at the prompts'
  // mean KV length (a request attends over at least its own new tokens).
  const int p_held = std::min(prompts.batch, (p_tok + std::max(1, w.context_len) - 1) / std::max(1, w.context_len));
  if (p_tok > 0 && (d_tok == 0 || prompts.batch > 0)) // decodes beside padding alone: no prompt request
    shape.batch = std::max({1, static_cast<int>(std::lround(1.0 * prompts.batch * p_tok / p_padded)), p_held});
  if (p_tok > 0 && w.phase == Phase::prefill && prompts.batch == 1 && nub > 1) {
    const int p_start = std::max(0, start - w.decode_tokens);
    shape.context_len = std::max(p_tok, std::min(w.context_len, w.context_len - prompts.tokens + p_start + p_tok));
  }
  if (d_tok > 0) {
    const int d_batch = std::max(1, static_cast<int>(std::lround(1.0 * w.decode_batch * d_tok / w.decode_tokens)));
    shape.batch += d_batch;
    if (p_tok > 0) {
      shape.decode_tokens      = d_tok;
      shape.decode_batch       = d_batch;
      shape.decode_context_len = w.decode_context_len;
    }
  }
  return shape;
}

/** The schedule a step runs: --schedule, else overlap.schedule (else the engine row's schedule of the step's phase)
 *  for the steps with its micro-batch count, else vLLM's rules (dbo when split, else async_combine or serial). Only a
 *  schedule the scenario names earns a note when the step's micro-batches overrule it: the engine's default is its
 *  rule for the steps it fits. */
static ScheduleId choose_schedule(const Deployment& sc, Phase phase, const std::string& forced, bool split, int nub,
                                  std::vector<std::string>& notes)
{
  const OverlapConfig& o = sc.overlap;
  const ScheduleId rule  = split ? ScheduleId::dbo : (o.async_combine ? ScheduleId::async_combine : ScheduleId::serial);
  if (!forced.empty()) {
    if (const std::optional<ScheduleId> id = schedule_named(forced))
      return *id;
    throw InputError(sc.file, 0, 0, "--schedule", fmt::format("unknown schedule '{}'", forced), schedule_names());
  }
  const bool named       = o.schedule.has_value();
  const ScheduleId asked = named ? *o.schedule : engine_schedule(engine_row(sc.engine), phase == Phase::prefill);
  const ScheduleEntry& e = schedule_entry(asked);
  if (e.num_ubatches == nub)
    return asked;
  if (named)
    notes.push_back(fmt::format("overlap.schedule {} runs {} micro-batch(es), this step {}: {} (vLLM's rules)", e.name,
                                e.num_ubatches, nub, schedule_name(rule)));
  return rule;
}

static void check_step_inputs(const Deployment& sc, const models::StepShape& w, const StepPlan& plan)
{
  const models::HwProfile& hw = sc.hw;
  if (plan.num_layers <= 0)
    throw InputError(sc.file, 0, 0, "model", fmt::format("model {} has no layers", sc.model.name), ">= 1 layer");
  if (hw.sm_count <= 0)
    throw InputError(sc.file, 0, 0, "hw", fmt::format("profile {} has no sm_count", hw.name), ">= 1");
  if (w.tokens < 0)
    throw InputError(sc.file, 0, 0, "workload.tokens_per_rank", "negative token count", ">= 0");
}

/** How vLLM's DBO cuts the step: the token count padded across DP, whether it splits, into how many micro-batches. */
struct UbatchSplit {
  int padded_tokens = 0;
  bool decode       = false;
  bool split        = false;
  int num_ubatches  = 1;
};

/* DBO: DP padding, threshold for the phase, split at padded/2 (vLLM ubatch_utils). */
static UbatchSplit dbo_split(const Deployment& sc, const models::StepShape& w, const PlanOptions& opt, StepPlan& plan)
{
  const OverlapConfig& o = sc.overlap;
  UbatchSplit u;
  u.padded_tokens     = std::max(w.tokens, opt.max_tokens_across_dp);
  u.decode            = w.phase == Phase::decode;
  const int padded    = u.padded_tokens;
  const int threshold = o.dbo_token_threshold(u.decode);
  u.split             = o.dbo_enabled() && padded >= threshold && opt.dp_ranks_agree_ubatch;
  if (o.dbo_enabled() && padded < threshold)
    plan.notes.push_back(fmt::format("DBO on, but {} tokens are below the {} threshold {}: the step runs unsplit",
                                     padded, u.decode ? "decode" : "prefill", threshold));
  else if (o.dbo_enabled() && !u.split)
    plan.notes.push_back("DBO on, but a DP rank's own tokens are below its threshold: every rank runs unsplit (vLLM "
                         "micro-batches only when all DP ranks agree)");
  u.num_ubatches = u.split ? o.num_ubatches() : 1;
  if (u.num_ubatches > 2)
    throw InputError(sc.file, 0, 0, "overlap.ubatch_size",
                     fmt::format("{} micro-batches: the schedules model vLLM's two", u.num_ubatches), "2");
  return u;
}

/* The schedule (choose_schedule), which must run the step's micro-batch count. */
static void set_schedule(const Deployment& sc, const models::StepShape& w, const PlanOptions& opt, const UbatchSplit& u,
                         StepPlan& plan)
{
  const int nub = u.num_ubatches;
  plan.schedule = choose_schedule(sc, w.phase, opt.schedule, u.split, nub, plan.notes);
  if (u.split && sc.overlap.async_combine)
    plan.notes.emplace_back("async combine forced synchronous under DBO (vLLM: combine_async = do_async and not "
                            "dbo_enabled())");
  const ScheduleEntry* chosen = &schedule_entry(plan.schedule);
  if (chosen->num_ubatches != nub) {
    std::string fitting;
    for (const ScheduleEntry& e : schedule_registry())
      if (e.num_ubatches == nub)
        fitting += (fitting.empty() ? "" : ", ") + std::string(e.name);
    throw InputError(
        sc.file, 0, 0, "--schedule",
        fmt::format("schedule {} needs {} micro-batch(es); this step has {}", chosen->name, chosen->num_ubatches, nub),
        fitting);
  }
}

/* SM partition (models/All2AllTable.hpp): a backend that honours dbo_comm_sms (DeepEP high-throughput) holds comm_sms
 * under DBO; one whose kernels hold no SMs (DeepEP low-latency, max_sms_used 0) holds none. Sets plan.gpu; returns
 * whether compute runs on a partition. */
static bool set_sm_partition(const Deployment& sc, bool split, StepPlan& plan)
{
  const OverlapConfig& o           = sc.overlap;
  const models::HwProfile& hw      = sc.hw;
  const models::All2AllTraits& a2a = models::all2all_traits_of(sc.parallel.backend);
  const bool host_sync             = sc.execution.host_sync_after_comm;
  if (o.dbo_comm_sms < 0 || o.dbo_comm_sms >= hw.sm_count)
    throw InputError(sc.file, 0, 0, "overlap.dbo_comm_sms", fmt::format("{} SMs", o.dbo_comm_sms),
                     fmt::format("0 .. {}", hw.sm_count - 1));
  bool partition = split && a2a.honours_dbo_comm_sms && o.dbo_comm_sms > 0;
  if (partition && host_sync) {
    partition = false;
    plan.notes.emplace_back("host_sync_after_comm (ROCm DeepEP high-throughput): comm SMs forced to 0");
  }
  if (partition && !hw.platform.deepep_ht_dbo_partition) {
    partition = false;
    plan.notes.emplace_back(
        fmt::format("{}: no comm SM partition for DeepEP high-throughput under DBO (platform.deepep_ht_dbo_partition)",
                    models::platform_name(hw.platform.stack)));
  }
  plan.gpu.sm_count      = hw.sm_count;
  plan.gpu.comm_sms      = partition ? o.dbo_comm_sms : 0;
  plan.gpu.comm_uses_sms = a2a.holds_sms;
  if (plan.gpu.comm_uses_sms) {
    using models::Interference;
    plan.gpu.interference_shared       = interference(hw, &Interference::compute_with_comm, plan);
    plan.gpu.interference_partitioned  = interference(hw, &Interference::compute_with_comm_partitioned, plan);
    plan.gpu.comm_slowdown_shared      = interference(hw, &Interference::comm_with_compute, plan);
    plan.gpu.comm_slowdown_partitioned = interference(hw, &Interference::comm_with_compute_partitioned, plan);
  }
  // DeepEP's high-throughput kernels reserve more than half an SM's shared memory per CTA (intranode dispatch: 768
  // threads x 8192 B TMA buffer per warp = 196608 B; internode: 16384 B x 8 peers = 131072 B; a Hopper SM has 228 KiB):
  // one CTA per SM and no compute CTA beside it.
  plan.gpu.comm_needs_whole_sms = a2a.whole_sm_ctas;
  return partition;
}

/* How the collectives run under DBO: DeepEP low-latency's recv hooks (returned: whether D and C split into send and
 * recv hook), DeepEP high-throughput's wait for the compute tail; then the interference factors are checked. */
static bool set_collective_rules(const Deployment& sc, bool split, StepPlan& plan)
{
  const models::All2AllTraits& a2a = models::all2all_traits_of(sc.parallel.backend);
  // DeepEP low-latency under DBO: vLLM asks for return_recv_hook, so each D and C is a send kernel, then its data in
  // flight with no SMs held, then a recv kernel that the other micro-batch's thread issues.
  const bool recv_hooks = split && a2a.has_recv_hook;
  if (recv_hooks && sc.parallel.ep > 1)
    plan.notes.emplace_back("DeepEP low-latency under DBO: D and C run as send + recv hook (return_recv_hook)");
  // DeepEP high-throughput's DBO collectives in the engine's prepare/finalize (config/EngineTable.hpp).
  const ServingEngine& engine        = engine_row(sc.engine);
  plan.collectives_wait_compute_tail = split && plan.schedule == ScheduleId::dbo && sc.parallel.ep > 1 &&
                                       sc.parallel.backend == models::All2AllBackend::deepep_high_throughput &&
                                       engine.dbo_ht_waits_compute_tail;
  if (plan.collectives_wait_compute_tail)
    plan.notes.push_back(fmt::format("{}@{} under DBO: each DeepEP high-throughput dispatch and combine waits for the "
                                     "compute the other micro-batch queued before it ({})",
                                     engine.name, engine.version, engine.dbo_ht_event_rule.source));
  for (double f : {plan.gpu.interference_shared, plan.gpu.interference_partitioned, plan.gpu.comm_slowdown_shared,
                   plan.gpu.comm_slowdown_partitioned})
    if (!(f >= 1.0) || !std::isfinite(f))
      throw InputError(sc.hw.name, 0, 0, "interference", fmt::format("factor {}", f), ">= 1");
  return recv_hooks;
}

/* Host: full CUDA graphs only for uniform decode; a host synchronize cannot live inside a graph. Piecewise graphs for
 * any step up to vLLM's largest capture size (VllmConfig._set_cudagraph_sizes, vllm/config/vllm.py:
 * min(max_num_seqs x query length x 2, 512) by default; the CUDA-graph dispatcher runs a larger batch eager). */
static void set_graph_mode(const Deployment& sc, const UbatchSplit& u, StepPlan& plan)
{
  constexpr int max_capture_tokens = 512;
  const bool host_sync             = sc.execution.host_sync_after_comm;
  const int padded                 = u.padded_tokens;
  const CudaGraphMode mode         = sc.execution.cuda_graph;
  plan.host.cuda_graph             = mode == CudaGraphMode::full && u.decode && !host_sync;
  if (mode == CudaGraphMode::full && !plan.host.cuda_graph)
    plan.notes.emplace_back(u.decode
                                ? "host_sync_after_comm: the step runs eager (a synchronize cannot be captured)"
                                : "prefill is not a uniform decode batch: no full CUDA graph, the step runs eager");
  if (mode == CudaGraphMode::piecewise) {
    plan.host.piecewise = !host_sync && padded <= max_capture_tokens;
    if (host_sync)
      plan.notes.emplace_back("host_sync_after_comm: the step runs eager (a synchronize cannot be captured)");
    else if (!plan.host.piecewise)
      plan.notes.push_back(fmt::format("{} tokens exceed vLLM's largest CUDA-graph capture size {}: the step runs "
                                       "eager (no piecewise graph)",
                                       padded, max_capture_tokens));
    else
      plan.notes.push_back(fmt::format(
          "cuda_graph piecewise: the attention op{} runs eagerly between captured pieces (vLLM splitting_ops)",
          models::all2all_traits_of(sc.parallel.backend).piecewise_splits_moe
              ? " and the fused-MoE op (this backend's dispatch/combine)"
              : ""));
  }
}

/* The host's costs and the GPU-side kernel gaps; optional profile keys: absent, a stated fallback (noted only where
 * this step uses it). */
static void set_host_costs(const Deployment& sc, int num_ubatches, StepPlan& plan)
{
  const models::HwProfile& hw = sc.hw;
  const bool graphs           = plan.host.cuda_graph || plan.host.piecewise;
  auto host_key               = [&](double v, const char* key, bool used, double fallback, const char* what) {
    if (v >= 0)
      return v;
    if (used)
      plan.notes.push_back(fmt::format("profile {} has no host.{}: {}", hw.name, key, what));
    return fallback;
  };
  // An eager kernel costs the host its C++ launch and the Python the engine runs to reach it (every engine modelled
  // runs its forward from Python): under a full graph only the graph launch is paid.
  plan.host.launch_cpu_us = hw.launch_cpu_us + host_key(hw.python_launch_us, "python_launch", !plan.host.cuda_graph,
                                                        0.0, "an eager kernel costs the C++ launch only");
  plan.host.event_us      = hw.event_us;
  plan.host.handoff_us    = num_ubatches > 1 ? hw.event_us : 0; // yield: record/wait of compute_done/comm_done
  plan.host.graph_launch_us =
      host_key(hw.graph_launch_us, "graph_launch", graphs, hw.launch_cpu_us, "a graph launch costs a kernel launch");
  plan.host.kernel_gap_us       = hw.graph_replay_kernel_us;
  plan.host.eager_kernel_gap_us = host_key(hw.eager_kernel_gap_us, "eager_kernel_gap", !plan.host.cuda_graph,
                                           hw.graph_replay_kernel_us, "an eager kernel's GPU gap is the graph's");
  plan.host.piece_gap_us =
      host_key(hw.graph_piece_gap_us, "graph_piece_gap", plan.host.piecewise, 0.0, "a piece boundary adds no GPU gap");
  plan.host.stream_sync_us       = hw.stream_sync_us;
  plan.host.host_sync_after_comm = sc.execution.host_sync_after_comm;
}

/* The step's work outside the layers, on the whole batch after both micro-batches: its kernels back to back on the
 * compute stream, each with the graph's per-kernel gap; eager, the host launches each one. */
static void set_step_work(const models::StepShape& w, int padded, const CostSource& costs, StepPlan& plan)
{
  if (!costs.step_work)
    return;
  const bool graphs = plan.host.cuda_graph || plan.host.piecewise;
  models::StepShape whole;
  whole.phase               = w.phase;
  whole.tokens              = padded;
  whole.batch               = w.tokens > 0 ? w.batch : 0;
  whole.context_len         = w.context_len;
  const models::OpCost work = costs.step_work(whole);
  // Piecewise: the embedding and the final norm ride in the first and last pieces, the LM head and the sampler are
  // priced as under a full graph (dbosim's full graph captures them too).
  const double gpu_us =
      work.duration_us + work.kernels * (graphs ? plan.host.kernel_gap_us : plan.host.eager_kernel_gap_us);
  plan.step_work_us      = graphs ? gpu_us : std::max(gpu_us, work.kernels * plan.host.launch_cpu_us);
  plan.step_work_kernels = work.kernels;
  if (!std::isfinite(plan.step_work_us) || plan.step_work_us < 0)
    throw InternalError(fmt::format("cost model gave the step's work outside the layers {} us", plan.step_work_us));
}

/* Micro-batches: equal slices of the padded count; a slice with none of this rank's tokens is a dummy. */
static void add_ubatch_costs(const Deployment& sc, const models::StepShape& w, const CostSource& costs,
                             const UbatchSplit& u, bool partition, bool recv_hooks, StepPlan& plan)
{
  const models::All2AllTraits& a2a = models::all2all_traits_of(sc.parallel.backend);
  const int padded                 = u.padded_tokens;
  const int nub                    = u.num_ubatches;
  const int compute_sms            = sc.hw.sm_count - plan.gpu.comm_sms;
  for (int ub = 0; ub < nub; ++ub) {
    const int start = padded * ub / nub;
    const int len   = padded * (ub + 1) / nub - start;
    UbatchCosts c;
    c.tokens                      = len;
    c.real_tokens                 = std::clamp(w.tokens - start, 0, len);
    const models::StepShape shape = ubatch_shape(w, padded, start, len, nub);
    if (c.real_tokens == 0 && nub > 1)
      plan.notes.push_back(fmt::format("micro-batch {} has none of this rank's tokens: it runs as a dummy", ub));
    if (plan.first_k_dense > 0)
      c.dense = to_specs(costs.layer(shape, false, plan.gpu.comm_sms), costs, compute_sms, partition, false,
                         plan.host.piecewise, false);
    if (plan.first_k_dense < plan.num_layers) {
      const models::LayerCosts lc = costs.layer(shape, true, plan.gpu.comm_sms);
      c.moe = to_specs(lc, costs, compute_sms, partition, recv_hooks, plan.host.piecewise, a2a.piecewise_splits_moe);
      plan.expert_spin_us += lc.straggler_us * (plan.num_layers - plan.first_k_dense);
      plan.hot_rank_load = std::max(plan.hot_rank_load, lc.hot_rank_load);
    }
    plan.ubatches.push_back(std::move(c));
  }
  if (plan.hot_rank_load > 1.0)
    plan.notes.push_back(fmt::format("expert load {}: the busiest EP rank carries {:.3f}x the mean ({}); "
                                     "cluster.expert_load: ideal for balanced routing",
                                     models::expert_load_model_name(expert_load_model(sc.cluster)), plan.hot_rank_load,
                                     models::expert_load_source_of(expert_load_model(sc.cluster))));
}

StepPlan build_step_plan(const Deployment& sc, const models::StepShape& w, const CostSource& costs,
                         const PlanOptions& opt)
{
  StepPlan plan;
  plan.num_layers    = sc.model.num_layers;
  plan.first_k_dense = std::min(sc.model.first_k_dense, sc.model.num_layers);
  check_step_inputs(sc, w, plan);
  const UbatchSplit u = dbo_split(sc, w, opt, plan);
  plan.prefill        = !u.decode;
  set_schedule(sc, w, opt, u, plan);
  const bool partition  = set_sm_partition(sc, u.split, plan);
  const bool recv_hooks = set_collective_rules(sc, u.split, plan);
  set_graph_mode(sc, u, plan);
  set_host_costs(sc, u.num_ubatches, plan);
  set_step_work(w, u.padded_tokens, costs, plan);
  add_ubatch_costs(sc, w, costs, u, partition, recv_hooks, plan);
  return plan;
}

} // namespace dbosim::sim

#include "plan/LaunchCommand.hpp"

#include "config/EngineTable.hpp"
#include "models/All2AllTable.hpp"
#include "plan/EngineLaunches.hpp"
#include "plan/PrecisionLaunch.hpp"
#include "plan/UnsaidSettings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace dbosim::plan {

std::string model_id(const models::ModelSpec& m)
{
  const std::string hf = "https://huggingface.co/";
  if (m.source.rfind(hf, 0) != 0)
    return m.name;
  const std::string rest = m.source.substr(hf.size());
  const auto org_end     = rest.find('/');
  if (org_end == std::string::npos || org_end == 0)
    return m.name;
  const auto name_end  = rest.find('/', org_end + 1);
  const std::string id = name_end == std::string::npos ? rest : rest.substr(0, name_end);
  return id.size() > org_end + 1 ? id : m.name;
}

namespace {

/** vLLM's --all2all-backend value for a dbosim backend (the table's vllm_name). vLLM's accepted values: the
 *  All2AllBackend Literal in vllm/config/parallel.py (naive, pplx, the DeepEP ones, mori_*, nixl_ep,
 *  allgather_reducescatter, flashinfer_*). dbosim's nccl is the NCCL collective path, vLLM's
 *  allgather_reducescatter (its default). */
std::string vllm_backend(models::All2AllBackend b) { return models::all2all_traits_of(b).vllm_name; }

/** The backends vLLM micro-batches, as "a or b" (vllm/config/vllm.py). */
std::string ubatching_backends()
{
  std::vector<std::string> names;
  for (const models::All2AllTraits& t : models::all2all_traits)
    if (t.vllm_ubatching)
      names.push_back(t.vllm_name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

/** The `vllm serve` launch of `s`. */
/** The expert-parallel, EPLB and DBO flags and their environment (vllm/engine/arg_utils.py, vllm/envs.py). */
void vllm_parallel_args(const Scenario& s, LaunchCommand& l, std::string& args)
{
  const auto& par = s.parallel;
  const auto& ov  = s.overlap;
  auto note       = [&](const std::string& text) { l.notes.push_back("# " + text); };
  if (par.ep > 1) {
    args += " --enable-expert-parallel --all2all-backend " + vllm_backend(par.backend);
    if (vllm_backend(par.backend) != models::backend_name(par.backend))
      note(fmt::format("dbosim's {} all-to-all is vLLM's {}", models::backend_name(par.backend),
                       vllm_backend(par.backend)));
  }
  // EPLB is on where the placement is EPLB's (cluster.expert_load auto prices its residual then), with or without
  // redundant slots.
  if (s.cluster.routing.placement == models::Placement::eplb)
    args += " --enable-eplb";
  if (s.cluster.routing.redundant_experts > 0)
    args += fmt::format(" --eplb-config '{{\"num_redundant_experts\":{}}}'", s.cluster.routing.redundant_experts);
  if (ov.dbo_enabled()) {
    args += ov.enable_dbo ? " --enable-dbo" : fmt::format(" --ubatch-size {}", ov.ubatch_size);
    args += fmt::format(" --dbo-decode-token-threshold {} --dbo-prefill-token-threshold {}",
                        ov.dbo_decode_token_threshold, ov.dbo_prefill_token_threshold);
    // vllm/envs.py: VLLM_DBO_COMM_SMS, the SMs the all-to-all kernels hold under DBO.
    l.env.emplace_back("VLLM_DBO_COMM_SMS", std::to_string(ov.dbo_comm_sms));
    if (!models::all2all_traits_of(par.backend).vllm_ubatching)
      note(fmt::format("vLLM's micro-batching asks for {} (vllm/config/vllm.py); {} may be refused",
                       ubatching_backends(), vllm_backend(par.backend)));
  }
  // vllm/envs.py: VLLM_MOE_DP_CHUNK_SIZE, the tokens of one MoE DP chunk (and of DeepEP low-latency's buffer).
  if (s.execution.moe_dp_chunk_tokens > 0 &&
      s.execution.moe_dp_chunk_tokens != engine_row(s.engine).moe_dp_chunk_tokens)
    l.env.emplace_back("VLLM_MOE_DP_CHUNK_SIZE", std::to_string(s.execution.moe_dp_chunk_tokens));
}

/** The scheduler and cache groups. */
void vllm_scheduler_args(const Scenario& s, std::string& args)
{
  const auto& sch = s.scheduler;
  args += fmt::format(" --max-num-seqs {} --max-num-batched-tokens {}", sch.max_num_seqs, sch.max_num_batched_tokens);
  if (!sch.enable_chunked_prefill)
    args += " --no-enable-chunked-prefill"; // a bool field: argparse BooleanOptionalAction gives --no-...
  if (!sch.enable_prefix_caching)
    args += " --no-enable-prefix-caching";
  if (sch.async_scheduling)
    args += " --async-scheduling";
  if (sch.gpu_memory_utilization != 0.9)
    args += fmt::format(" --gpu-memory-utilization {:g}", sch.gpu_memory_utilization);
  if (sch.block_size != 16)
    args += fmt::format(" --block-size {}", sch.block_size);
  if (sch.num_gpu_blocks_override > 0)
    args += fmt::format(" --num-gpu-blocks-override {}", sch.num_gpu_blocks_override);
}

/** CUDA graphs: CompilationConfig.cudagraph_mode (vllm/config/compilation.py, CUDAGraphMode). dbosim's full graphs
 *  replay decode steps and run the rest eagerly; vLLM's FULL_AND_PIECEWISE (its v1 default) replays decode batches as
 *  full graphs and the mixed ones as piecewise graphs. none is --enforce-eager (ModelConfig.enforce_eager). */
void vllm_graph_args(const Scenario& s, std::string& args)
{
  switch (s.execution.cuda_graph) {
  case CudaGraphMode::full:
    args += " --compilation-config '{\"cudagraph_mode\":\"FULL_AND_PIECEWISE\"}'";
    break;
  case CudaGraphMode::piecewise:
    args += " --compilation-config '{\"cudagraph_mode\":\"PIECEWISE\"}'";
    break;
  case CudaGraphMode::none:
    args += " --enforce-eager";
    break;
  }
}

/** vllm/config/speculative.py (SpeculativeConfig: method, num_speculative_tokens). */
void vllm_speculative_args(const Scenario& s, LaunchCommand& l, std::string& args)
{
  auto note = [&](const std::string& text) { l.notes.push_back("# " + text); };
  if (s.speculative.enabled()) {
    args += fmt::format(" --speculative-config '{{\"method\":\"{}\",\"num_speculative_tokens\":{}}}'",
                        models::spec_method_name(s.speculative.method), s.speculative.num_speculative_tokens);
    if (!s.speculative.acceptance_rate.empty())
      note("speculative_config.acceptance_rate is measured by vLLM's spec-decode metrics, not set");
  }
}

/** Multi-node data parallelism (vllm/entrypoints/cli/serve.py and arg_utils.py): every node names the head's address;
 *  the others run headless from their first DP rank. */
void vllm_nodes(const std::string& args, int nnodes, int local, LaunchCommand& l)
{
  auto note = [&](const std::string& text) { l.notes.push_back("# " + text); };
  if (nnodes == 1) {
    l.nodes.push_back(args);
    return;
  }
  note(fmt::format("{} nodes, {} DP ranks each: HEAD_IP is the head node's address (a placeholder)", nnodes, local));
  for (int n = 0; n < nnodes; ++n)
    l.nodes.push_back(n == 0
                          ? args + " --data-parallel-address HEAD_IP"
                          : fmt::format("{} --headless --data-parallel-start-rank {} --data-parallel-address HEAD_IP",
                                        args, n * local));
}

LaunchCommand vllm_launch(const Scenario& s)
{
  LaunchCommand l;
  const auto& par  = s.parallel;
  const auto& sch  = s.scheduler;
  auto note        = [&](const std::string& text) { l.notes.push_back("# " + text); };
  const int local  = std::max(1, std::min(par.dp, s.cluster.gpus_per_node / std::max(1, par.tp)));
  const int nnodes = (par.dp + local - 1) / local;

  // vllm/engine/arg_utils.py (EngineArgs.add_cli_args): the parallel group.
  std::string args = fmt::format("vllm serve {} --tensor-parallel-size {} --data-parallel-size {} "
                                 "--data-parallel-size-local {}",
                                 model_id(s.model), par.tp, par.dp, local);
  vllm_parallel_args(s, l, args);
  vllm_scheduler_args(s, args);
  // The precision flags (plan/PrecisionLaunch): KV-cache dtype, NVFP4 dispatch; the weights' format is the
  // checkpoint's.
  const PrecisionLaunch precision = precision_launch(s, LaunchFamily::vllm_serve);
  args += precision.args;
  l.env.insert(l.env.end(), precision.env.begin(), precision.env.end());
  l.notes.insert(l.notes.end(), precision.notes.begin(), precision.notes.end());
  vllm_graph_args(s, args);
  vllm_speculative_args(s, l, args);
  // What vLLM cannot be told (plan/UnsaidSettings.cpp decides, for every engine).
  for (const UnsaidSetting& u : unsaid_settings(s))
    l.notes.push_back(u.note);
  if (sch.disaggregated_prefill)
    note("scheduler.disaggregated_prefill: run this command twice, a prefill and a decode deployment, joined by a KV "
         "connector (--kv-transfer-config)");

  vllm_nodes(args, nnodes, local, l);
  return l;
}

} // namespace

LaunchCommand launch_command(const Scenario& s)
{
  const ServingEngine& e = engine_row(s.engine);
  switch (e.launch) {
  case LaunchFamily::vllm_serve:
    return vllm_launch(s);
  case LaunchFamily::sglang_launch_server:
    return sglang_launch(s);
  case LaunchFamily::trtllm_serve:
    return trtllm_launch(s);
  case LaunchFamily::none:
    break;
  }
  LaunchCommand l;
  l.notes.push_back(fmt::format("# {} ({}): {}", e.label, engine_id(e), e.launch_rule.rule));
  return l;
}

std::string format_launch(const LaunchCommand& l)
{
  std::string s;
  for (const auto& n : l.notes)
    s += n + "\n";
  for (const auto& [name, value] : l.env)
    s += fmt::format("export {}={}\n", name, value);
  const std::size_t count = l.nodes.size();
  for (std::size_t n = 0; n < count; ++n) {
    // Many nodes: the head, the first headless node and the last; those between differ from the first headless one
    // only in their start rank (summary.json's launch.nodes has every command).
    if (count > launch_nodes_shown && n == 2) {
      s += fmt::format("# nodes 2 .. {} ({} nodes): node 1's command with their own --data-parallel-start-rank "
                       "(summary.json: launch.nodes)\n",
                       count - 2, count - 3);
      n = count - 1;
    }
    if (count > 1)
      s += fmt::format("# node {}\n", n);
    s += l.nodes[n] + "\n";
  }
  return s;
}

nlohmann::json launch_json(const LaunchCommand& l)
{
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [name, value] : l.env)
    env[name] = value;
  return {{"command", l.nodes.empty() ? "" : l.nodes.front()}, {"env", env}, {"nodes", l.nodes}, {"notes", l.notes}};
}

} // namespace dbosim::plan

#include "plan/EngineLaunches.hpp"

#include "config/EngineTable.hpp"
#include "models/All2AllTable.hpp"
#include "plan/PrecisionLaunch.hpp"
#include "plan/UnsaidSettings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dbosim::plan {
namespace {

/** SGLang's --deepep-mode for the DeepEP backends dbosim models (docs.sglang.io server arguments: auto, normal,
 *  low_latency); a backend not listed is not DeepEP. */
struct DeepepMode {
  models::All2AllBackend backend;
  const char* mode;
};
constexpr DeepepMode sglang_deepep_modes[] = {{models::All2AllBackend::deepep_low_latency, "low_latency"},
                                              {models::All2AllBackend::deepep_high_throughput, "normal"}};

const char* deepep_mode(models::All2AllBackend b)
{
  for (const DeepepMode& m : sglang_deepep_modes)
    if (m.backend == b)
      return m.mode;
  return nullptr;
}

/** The notes every non-vLLM launch shares: what the engine cannot be told (plan/UnsaidSettings.cpp), and how to
 *  deploy a disaggregated prefill. */
void add_shared_notes(const Scenario& s, LaunchCommand& l)
{
  for (const UnsaidSetting& u : unsaid_settings(s))
    l.notes.push_back(u.note);
  if (s.scheduler.disaggregated_prefill)
    l.notes.push_back("# scheduler.disaggregated_prefill: run a prefill and a decode deployment");
}

} // namespace

// Flags: https://docs.sglang.io/advanced_features/server_arguments.html (--model-path, --tp, --dp,
// --enable-dp-attention, --enable-two-batch-overlap, --deepep-mode, --max-running-requests, --disable-cuda-graph,
// --nnodes, --node-rank, --dist-init-addr) and https://docs.sglang.io/advanced_features/expert_parallelism.html
// (--moe-a2a-backend deepep); the May 2025 builds' --enable-deepep-moe in sgl-project/sglang
// docs/backend/pd_disaggregation.md @01a4a975. The row's deepep_flag says which a version takes.
LaunchCommand sglang_launch(const Scenario& s)
{
  LaunchCommand l;
  const ServingEngine& e = engine_row(s.engine);
  const auto& par        = s.parallel;
  const int gpus         = par.dp * par.tp;
  const int nnodes       = std::max(1, s.cluster.nodes);
  std::string args       = fmt::format("{} --model-path {} --tp {}", e.launch_text, model_id(s.model), gpus);
  if (par.dp > 1) // SGLang's --tp is every GPU of the instance; --dp with DP attention splits attention over them
    args += fmt::format(" --dp {} --enable-dp-attention", par.dp);
  if (par.ep > 1) {
    const char* mode = deepep_mode(par.backend);
    if (mode) // else not a SGLang all-to-all (plan/UnsaidSettings.cpp)
      args += fmt::format(" {} --deepep-mode {}", e.deepep_flag, mode);
  }
  if (s.overlap.dbo_enabled())
    args += " --enable-two-batch-overlap";
  args += fmt::format(" --max-running-requests {}", s.scheduler.max_num_seqs);
  if (s.execution.cuda_graph == CudaGraphMode::none)
    args += " --disable-cuda-graph";
  const PrecisionLaunch precision = precision_launch(s, LaunchFamily::sglang_launch_server);
  args += precision.args;
  l.notes.insert(l.notes.end(), precision.notes.begin(), precision.notes.end());
  if (s.cluster.routing.redundant_experts > 0)
    l.notes.push_back(fmt::format("# EPLB with {} redundant experts: SGLang's EPLB flags are not spelled here",
                                  s.cluster.routing.redundant_experts));
  add_shared_notes(s, l);
  if (nnodes == 1) {
    l.nodes.push_back(args);
    return l;
  }
  l.notes.push_back(fmt::format("# {} nodes: HEAD_IP is node 0's address (a placeholder)", nnodes));
  for (int n = 0; n < nnodes; ++n)
    l.nodes.push_back(fmt::format("{} --nnodes {} --node-rank {} --dist-init-addr HEAD_IP:5000", args, nnodes, n));
  return l;
}

// Flags: https://nvidia.github.io/TensorRT-LLM/1.0.0rc6/commands/trtllm-serve/trtllm-serve.html (MODEL, --tp_size,
// --ep_size, --max_batch_size, --max_num_tokens); --extra_llm_api_options and its YAML keys enable_attention_dp and
// cuda_graph_config: https://nvidia.github.io/TensorRT-LLM/0.20.0/examples/deepseek_r1_reasoning_parser.html and
// https://nvidia.github.io/TensorRT-LLM/examples/deepseek_r1_reasoning_parser.html.
LaunchCommand trtllm_launch(const Scenario& s)
{
  LaunchCommand l;
  const auto& par  = s.parallel;
  std::string args = fmt::format("{} {} --tp_size {} --ep_size {} --max_batch_size {} --max_num_tokens {}",
                                 engine_row(s.engine).launch_text, model_id(s.model), par.dp * par.tp, par.ep,
                                 s.scheduler.max_num_seqs, s.scheduler.max_num_batched_tokens);
  std::string yaml;
  if (par.dp > 1)
    yaml += " enable_attention_dp: true;";
  if (s.execution.cuda_graph != CudaGraphMode::none)
    yaml += " cuda_graph_config: {enable_padding: true};";
  // The capacity scheduler's policy (useful-runtime-flags.md, 'Capacity Scheduler Policy'): the default reserves.
  if (resolved_kv_admission(s.scheduler.kv_admission, s.engine) == KvAdmission::preempt)
    yaml += " scheduler_config: {capacity_scheduler_policy: MAX_UTILIZATION};";
  const PrecisionLaunch precision = precision_launch(s, LaunchFamily::trtllm_serve);
  yaml += precision.trtllm_options;
  if (!yaml.empty()) {
    args += " --extra_llm_api_options extra-llm-api-config.yml";
    l.notes.push_back("# extra-llm-api-config.yml:" + yaml.substr(0, yaml.size() - 1));
  }
  l.notes.insert(l.notes.end(), precision.notes.begin(), precision.notes.end());
  add_shared_notes(s, l);
  if (s.cluster.nodes > 1)
    l.notes.push_back(
        fmt::format("# {} nodes: TensorRT-LLM starts a multi-node run under MPI (not spelled here)", s.cluster.nodes));
  l.nodes.push_back(args);
  return l;
}

} // namespace dbosim::plan

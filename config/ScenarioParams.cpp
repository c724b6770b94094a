#include "config/ScenarioParams.hpp"

#include "base/InputError.hpp"
#include "config/EngineTable.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/ModelLoader.hpp"
#include "config/ParamHelpers.hpp"
#include "config/ScheduleTable.hpp"
#include "models/All2AllTable.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <optional>
#include <utility>

namespace dbosim {
void add_cluster_params(std::vector<ParamDecl>& p); // config/ClusterParams.cpp

std::string relative_to_file(const YamlMap& m, const std::string& name)
{
  auto ends_with     = [&](const char* ext) { return name.size() > 5 && name.compare(name.size() - 5, 5, ext) == 0; };
  const bool is_path = name.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".json");
  if (!is_path || name.front() == '/')
    return name;
  return (std::filesystem::path(m.file()).parent_path() / name).lexically_normal().string();
}

namespace {
using models::All2AllBackend;
using models::Phase;
using params::bool_param;
using params::enum_param;
using params::int_param;

/*** overlap.schedule: a name of the engine's schedule table ***/

ParamDecl schedule_param()
{
  std::vector<std::string> names;
  for (const sim::ScheduleTraits& t : sim::schedule_traits)
    names.push_back(t.name);
  ParamDecl d{"overlap.schedule",
              "enum",
              "",
              "the engine's",
              fmt::format("{}", fmt::join(names, ", ")),
              "Engine schedule of the steps with its micro-batch count (a two-micro-batch one: the steps DBO splits; "
              "the others follow vLLM's rules: dbo when split, else async_combine or serial); unset: the engine "
              "row's schedule of the step's phase; `dbosim schedules` lists them, run --schedule overrides",
              [](Scenario& s) { s.overlap.schedule.reset(); },
              nullptr};
  d.read = [names](YamlMap& m, const std::string& leaf, Scenario& s) {
    s.overlap.schedule = sim::schedule_named(m.get_enum(leaf, names)); // get_enum refuses a name of no row
  };
  return d;
}

/*** engine: a row of the serving-engine table, NAME or NAME@VERSION ***/

ParamDecl engine_param()
{
  const std::vector<std::string> values = engine_values();
  ParamDecl d{"engine",
              "enum",
              "",
              default_engine().name,
              fmt::format("{}", fmt::join(values, ", ")),
              "Serving engine (NAME, or NAME@VERSION for a pinned row): the default overlap.schedule and the launch "
              "command follow it; `dbosim engines` lists the rows and their rules",
              [](Scenario& s) { s.engine = &default_engine(); },
              nullptr};
  d.read = [values](YamlMap& m, const std::string& leaf, Scenario& s) {
    s.engine = find_engine(m.get_enum(leaf, values));
  };
  return d;
}

/*** overlap.all2all_backend: a name of the all-to-all table ***/

std::vector<std::pair<std::string, All2AllBackend>> all2all_choices()
{
  std::vector<std::pair<std::string, All2AllBackend>> choices;
  for (const models::All2AllTraits& t : models::all2all_traits)
    choices.emplace_back(t.name, t.backend);
  return choices;
}

/*** model: a zoo name, a path to a HF config.json, or an inline mapping ***/

void read_model(YamlMap& root, const std::string& leaf, Scenario& s)
{
  YAML::Node node = root.raw(leaf);
  if (node.IsMap()) {
    YamlMap inline_model = root.get_map(leaf);
    s.model              = load_model_yaml(inline_model);
    return;
  }
  const std::string name = relative_to_file(root, root.get_string(leaf));
  try {
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) // a HF config.json
      s.model = load_hf_config(name);
    else
      s.model = load_model_zoo(name);
  } catch (const InputError& e) {
    // A missing file or zoo entry is reported where the scenario names it; an error inside a config.json already
    // names its key and valid set (wrapping it would print "(valid: ...)" twice).
    if (e.line() == 0 && (e.key().empty() || e.file() != name))
      root.fail(leaf, e.what(), fmt::format("{}, or a path to a config.json", fmt::join(list_model_zoo(), ", ")));
    throw;
  }
}

void read_hardware(YamlMap& root, const std::string& leaf, Scenario& s)
{
  const std::string name = relative_to_file(root, root.get_string(leaf));
  try {
    s.hw = load_hw_profile(name);
  } catch (const InputError& e) {
    if (e.line() == 0)
      root.fail(leaf, e.what(), fmt::format("{}, or a path to a profile", fmt::join(list_hw_profiles(), ", ")));
    throw;
  }
}

std::vector<ParamDecl> build_params()
{
  std::vector<ParamDecl> p;
  p.push_back({"name", "string", "", "file stem", "any", "Scenario name shown in outputs", [](Scenario&) {},
               [](YamlMap& m, const std::string& leaf, Scenario& s) { s.name = m.get_string(leaf); }});
  p.push_back({"model", "model", "", "required", "zoo name (dbosim models), path to config.json, or a mapping",
               "Model architecture", nullptr, read_model});
  p.push_back({"hardware", "profile", "", "required", "profile name (dbosim hw) or a path",
               "Hardware profile of every GPU", nullptr, read_hardware});
  p.push_back(engine_param());
  p.push_back(int_param(
      "seed", "", 0, 0, 2147483647, "Seed of every random draw (routing, arrivals)",
      [](Scenario & s) -> auto& { return s.seed; }));

  p.push_back(int_param(
      "cluster.nodes", "nodes", 1, 1, 4096, "Nodes in the deployment",
      [](Scenario & s) -> auto& { return s.cluster.nodes; }));
  p.push_back(int_param(
      "cluster.gpus_per_node", "GPUs", 8, 1, 72, "GPUs per node",
      [](Scenario & s) -> auto& { return s.cluster.gpus_per_node; }));
  add_cluster_params(p);

  p.push_back(int_param(
      "parallel.dp", "ranks", 1, 1, 65536, "Data-parallel attention ranks (vLLM --data-parallel-size)",
      [](Scenario & s) -> auto& { return s.parallel.dp; }));
  p.push_back(int_param(
      "parallel.tp", "ranks", 1, 1, 64, "Tensor-parallel size inside each DP rank",
      [](Scenario & s) -> auto& { return s.parallel.tp; }));
  p.push_back(int_param(
      "parallel.ep", "ranks", 1, 1, 65536,
      "Expert-parallel size of the MoE layers (vLLM: dp x tp with --enable-expert-parallel). Balanced routing runs "
      "the whole range in O(ep) (EP 65536: ~1 s of CPU, 50 MB); drawn routing (cluster.routing uniform, zipf, "
      "histogram) draws every token and prices every rank from sparse rows, O(ep x tokens_per_rank): ep <= 16384 "
      "(~2 s, 0.3 GB at 128 tokens a rank) and ep x workload.tokens_per_rank <= 2^24",
      [](Scenario & s) -> auto& { return s.parallel.ep; }));

  p.push_back(enum_param<Phase>(
      "workload.phase", {{"decode", Phase::decode}, {"prefill", Phase::prefill}}, Phase::decode,
      "Step kind: uniform decode or prefill", [](Scenario & s) -> auto& { return s.step.phase; }));
  p.push_back(int_param(
      "workload.tokens_per_rank", "tokens", std::nullopt, 1, 1 << 20,
      "New tokens on each DP rank this step (decode: one per request)",
      [](Scenario & s) -> auto& { return s.step.tokens; }));
  p.push_back(int_param(
      "workload.context_len", "tokens", 4096, 1, 1 << 21,
      "KV length per request (decode) or prompt length (prefill: each request computes tokens_per_rank / batch "
      "of it; the rest is already cached, a prefix-cache hit or earlier chunks)",
      [](Scenario & s) -> auto& { return s.step.context_len; }));
  p.push_back(int_param(
      "workload.batch", "requests", 0, 0, 1 << 20,
      "Requests per DP rank; 0 = tokens_per_rank (decode) or tokens / context_len rounded up (prefill)",
      [](Scenario & s) -> auto& { return s.step.batch; }));

  p.push_back(bool_param(
      "overlap.enable_dbo", false, "Dual Batch Overlap: split the batch in two micro-batches",
      [](Scenario & s) -> auto& { return s.overlap.enable_dbo; }));
  p.push_back(int_param(
      "overlap.ubatch_size", "micro-batches", 0, 0, 2,
      "vLLM --ubatch-size: 2 enables DBO (vLLM takes more; the schedules model two micro-batches)",
      [](Scenario & s) -> auto& { return s.overlap.ubatch_size; }));
  p.push_back(int_param(
      "overlap.dbo_decode_token_threshold", "tokens", 32, 1, 1 << 20,
      "A pure-decode batch below this many tokens is not split",
      [](Scenario & s) -> auto& { return s.overlap.dbo_decode_token_threshold; }));
  p.push_back(int_param(
      "overlap.dbo_prefill_token_threshold", "tokens", 512, 1, 1 << 20,
      "A batch with prefill below this many tokens is not split",
      [](Scenario & s) -> auto& { return s.overlap.dbo_prefill_token_threshold; }));
  p.push_back(int_param(
      "overlap.dbo_comm_sms", "SMs", models::vllm_dbo_comm_sms, 0, 1024,
      "VLLM_DBO_COMM_SMS: SMs held by comm kernels under DBO (capped by the backend); unset: the profile's "
      "platform.dbo_comm_sms (vLLM: 20 on CUDA, 64 CUs on ROCm)",
      [](Scenario & s) -> auto& { return s.overlap.dbo_comm_sms; }));
  p.push_back(bool_param(
      "overlap.async_combine", false, "DeepEP finalize_async: shared experts run while the combine is in flight",
      [](Scenario & s) -> auto& { return s.overlap.async_combine; }));
  p.push_back(schedule_param());
  p.push_back(enum_param<All2AllBackend>(
      "overlap.all2all_backend", all2all_choices(), All2AllBackend::deepep_low_latency,
      "vLLM --all2all-backend for dispatch/combine; `dbosim backends` lists them and their traits",
      [](Scenario & s) -> auto& { return s.parallel.backend; }));

  p.push_back(enum_param<CudaGraphMode>(
      "execution.cuda_graph",
      {{"full", CudaGraphMode::full}, {"piecewise", CudaGraphMode::piecewise}, {"none", CudaGraphMode::none}},
      CudaGraphMode::full, "CUDA-graph mode (vLLM cudagraph_mode)",
      [](Scenario & s) -> auto& { return s.execution.cuda_graph; }));
  p.push_back(bool_param(
      "execution.host_sync_after_comm", false,
      "Host synchronize after every dispatch and combine (ROCm DeepEP high-throughput fix)",
      [](Scenario & s) -> auto& { return s.execution.host_sync_after_comm; }));
  p.push_back(int_param(
      "execution.moe_dp_chunk_tokens", "tokens", 0, 0, 1 << 20,
      "MoE DP chunk (vLLM VLLM_MOE_DP_CHUNK_SIZE): with a masked-buffer all-to-all each MoE layer runs dispatch, "
      "experts and combine once per chunk of the largest DP rank's tokens; 0: the engine's (vLLM 256, others none)",
      [](Scenario & s) -> auto& { return s.execution.moe_dp_chunk_tokens; }));
  add_speculative_params(p);
  add_precision_params(p);
  add_serving_params(p);
  return p;
}
} // namespace

std::string ParamDecl::section() const
{
  auto dot = key.find('.');
  return dot == std::string::npos ? "" : key.substr(0, dot);
}

std::string ParamDecl::leaf() const
{
  auto dot = key.find('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

const std::vector<ParamDecl>& scenario_params()
{
  static const std::vector<ParamDecl> params = build_params();
  return params;
}

std::string format_param_table()
{
  std::string out =
      fmt::format("{:<38} {:<8} {:<14} {:<12} {:<40} {}\n", "key", "type", "unit", "default", "valid", "doc");
  for (const auto& p : scenario_params())
    out += fmt::format("{:<38} {:<8} {:<14} {:<12} {:<40} {}\n", p.key, p.type, p.unit.empty() ? "-" : p.unit,
                       p.default_text, p.valid, p.doc);
  return out;
}

} // namespace dbosim

#include "config/ScenarioLoader.hpp"

#include "base/InputError.hpp"
#include "config/DataDir.hpp"
#include "config/InputFile.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/ParamHelpers.hpp"
#include "config/ScenarioParams.hpp"
#include "config/ServingBounds.hpp"
#include "config/YamlMap.hpp"
#include "models/All2AllTable.hpp"
#include "models/BalancedRouting.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace dbosim {
namespace {
using models::All2AllBackend;

/** @brief The scenario's mappings by section name ("" = top level), kept to locate cross-key errors. */
using Sections = std::map<std::string, YamlMap>;

void read_params(YamlMap& root, Sections& sections, Scenario& s)
{
  for (const auto& decl : scenario_params())
    if (decl.set_default)
      decl.set_default(s);
  for (const auto& decl : scenario_params()) {
    const std::string section = decl.section();
    if (!section.empty() && !sections.count(section)) {
      if (!root.has(section)) {
        if (decl.required())
          root.fail(section, fmt::format("required key {} is missing", decl.key));
        continue;
      }
      sections.emplace(section, root.get_map(section));
    }
    YamlMap& map = section.empty() ? root : sections.at(section);
    if (map.has(decl.leaf()))
      decl.read(map, decl.leaf(), s);
    else if (decl.required())
      map.fail(decl.leaf(), "required key is missing", decl.valid);
  }
  for (const auto& [name, map] : sections)
    map.finish();
  const std::vector<std::string> top = root.keys(); // (has() would make plan a valid key in "unknown key" messages)
  if (std::find(top.begin(), top.end(), "plan") != top.end()) // a capacity plan (plans/), given to run or sweep
    root.fail("plan", "this is a plan file (a scenario with a plan: section); run it with `dbosim plan FILE`",
              "a scenario without plan:");
  root.finish();
}

/** @brief Where a cross-key rule fails: a section's mapping when the file has it (else the top level), and the key
 *  to name there (the leaf, or the missing section itself). */
struct RuleSites {
  YamlMap& root;
  Sections& sec;
  YamlMap& at(const std::string& section) { return sec.count(section) ? sec.at(section) : root; }
  std::string leaf_or_section(const std::string& section, const std::string& leaf) const
  {
    return sec.count(section) ? leaf : section;
  }
  bool has(const std::string& section, const std::string& leaf) const
  {
    return sec.count(section) && sec.at(section).has(leaf);
  }
};

/** @brief The parallel layout fills the cluster; expert parallelism spans it and has experts to spread. */
void check_parallel_rules(RuleSites& r, const Scenario& s)
{
  const auto& m  = s.model;
  const auto& p  = s.parallel;
  const int gpus = s.cluster.nodes * s.cluster.gpus_per_node;
  if (p.dp * p.tp != gpus)
    r.at("parallel")
        .fail(r.leaf_or_section("parallel", "dp"),
              fmt::format("dp x tp = {} x {} = {} must equal the cluster's GPUs (nodes x gpus_per_node = {})", p.dp,
                          p.tp, p.dp * p.tp, gpus),
              fmt::format("dp x tp = {}", gpus));
  if (p.ep != 1 && p.ep != p.dp * p.tp)
    r.at("parallel")
        .fail(r.leaf_or_section("parallel", "ep"),
              fmt::format("expert parallelism spans all dp x tp = {} GPUs in vLLM, got ep {}", p.dp * p.tp, p.ep),
              fmt::format("1 or {}", p.dp * p.tp));
  if (p.ep > 1 && m.num_routed_experts == 0)
    r.at("parallel").fail("ep", fmt::format("model {} has no routed experts to spread", m.name), "1");
}

/** @brief Expert placement (vLLM/SGLang EPLB) and routing: the physical experts divide over ep, drawn routing stays
 *  within its bounds, every token can draw its experts. */
void check_expert_rules(RuleSites& r, const Scenario& s)
{
  const auto& m = s.model;
  const auto& p = s.parallel;
  // vLLM/SGLang EPLB: num_physical_experts = routed + redundant, divisible by ep; redundant slots only under EPLB.
  const models::RoutingSpec& rt = s.cluster.routing;
  if (rt.redundant_experts > 0 && rt.placement != models::Placement::eplb)
    r.at("cluster").fail(r.leaf_or_section("cluster", "placement"),
                         fmt::format("{} redundant experts need placement eplb", rt.redundant_experts), "eplb");
  if (m.num_routed_experts > 0 && (m.num_routed_experts + rt.redundant_experts) % p.ep != 0) {
    const int physical = (m.num_routed_experts + rt.redundant_experts + p.ep - 1) / p.ep * p.ep; // next multiple
    if (rt.redundant_experts > 0)
      r.at("cluster").fail(
          r.leaf_or_section("cluster", "redundant_experts"),
          fmt::format("{} routed + {} redundant experts do not divide over ep {}", m.num_routed_experts,
                      rt.redundant_experts, p.ep),
          fmt::format("routed + redundant a multiple of ep, e.g. {}", physical - m.num_routed_experts));
    r.at("parallel")
        .fail(r.leaf_or_section("parallel", "ep"),
              fmt::format("ep {} does not divide the {} routed experts of {}", p.ep, m.num_routed_experts, m.name),
              fmt::format("a divisor of the routed expert count, or cluster.placement eplb with "
                          "redundant_experts {} (routed + redundant divisible by ep)",
                          (m.num_routed_experts + p.ep - 1) / p.ep * p.ep - m.num_routed_experts));
  }
  if (rt.dist != models::RoutingDist::balanced && p.ep > models::drawn_routing_ep_max)
    r.at("parallel")
        .fail(r.leaf_or_section("parallel", "ep"),
              fmt::format("ep {} with cluster.routing {}: drawn routing draws every token and prices every rank, "
                          "bounded at ep {} (models/BalancedRouting.hpp)",
                          p.ep, models::routing_dist_name(rt.dist), models::drawn_routing_ep_max),
              fmt::format("1..{} with drawn routing; parallel.ep's whole range with cluster.routing balanced",
                          models::drawn_routing_ep_max));
  if (m.num_routed_experts > 0 && m.top_k > 0) {
    // Every token must be able to draw top_k distinct experts (and routing_topk_groups distinct groups): an
    // impossible histogram or group split is refused here, naming the groups, not found by a draw that cannot end.
    models::RoutingSpec flat = rt;
    flat.groups              = 0;
    if (const std::string why = models::routing_infeasibility(flat, m.num_routed_experts, m.top_k); !why.empty())
      r.at("cluster").fail(
          r.leaf_or_section("cluster", rt.dist == models::RoutingDist::histogram ? "routing_histogram" : "routing"),
          why, fmt::format("{} weights, at least top_k {} of them positive", m.num_routed_experts, m.top_k));
    if (const std::string why = models::routing_infeasibility(rt, m.num_routed_experts, m.top_k); !why.empty())
      r.at("cluster").fail(r.leaf_or_section("cluster", r.has("cluster", "routing_topk_groups") ? "routing_topk_groups"
                                                                                                : "routing_groups"),
                           why,
                           "groups dividing the experts; weight in at least routing_topk_groups groups holding top_k "
                           "weighted experts");
  }
}

/** @brief Tensor parallelism splits the attention heads evenly. */
void check_head_split(RuleSites& r, const Scenario& s)
{
  const auto& m   = s.model;
  const auto& p   = s.parallel;
  const int heads = m.attention == models::AttentionKind::mla ? m.mla.num_heads : m.gqa.num_heads;
  if (heads % p.tp != 0)
    r.at("parallel")
        .fail(r.leaf_or_section("parallel", "tp"),
              fmt::format("tp {} does not divide the {} attention heads of {}", p.tp, heads, m.name),
              "a divisor of the head count");
}

/** @brief DBO and async combine: the comm SMs (vLLM's platform default when unset), thresholds, parallelism and a
 *  backend that supports them on the profile's platform. */
void check_overlap_rules(RuleSites& r, Scenario& s)
{
  const auto& p = s.parallel;
  auto& ov      = s.overlap;
  // VLLM_DBO_COMM_SMS unset: vLLM's default on the profile's platform (20 SMs on CUDA, 64 CUs on ROCm).
  if (!r.has("overlap", "dbo_comm_sms"))
    ov.dbo_comm_sms = s.hw.platform.dbo_comm_sms;
  if (ov.dbo_comm_sms >= s.hw.sm_count)
    r.at("overlap").fail(
        r.leaf_or_section("overlap", "dbo_comm_sms"),
        fmt::format("{} comm SMs leave no SM for compute on {} ({} SMs)", ov.dbo_comm_sms, s.hw.name, s.hw.sm_count),
        fmt::format("0..{}", s.hw.sm_count - 1));
  if (ov.dbo_enabled()) {
    const int n = ov.num_ubatches();
    if (ov.dbo_decode_token_threshold < n)
      r.at("overlap").fail(r.leaf_or_section("overlap", "dbo_decode_token_threshold"),
                           fmt::format("must be >= the number of micro-batches ({})", n), fmt::format(">= {}", n));
    if (ov.dbo_prefill_token_threshold < n)
      r.at("overlap").fail(r.leaf_or_section("overlap", "dbo_prefill_token_threshold"),
                           fmt::format("must be >= the number of micro-batches ({})", n), fmt::format(">= {}", n));
    if (p.ep <= 1 && p.dp <= 1)
      r.at("overlap").fail(r.leaf_or_section("overlap", "enable_dbo"), "DBO needs expert or data parallelism",
                           "ep > 1 or dp > 1");
    if (!models::all2all_traits_of(p.backend).dbo)
      r.at("overlap").fail(r.leaf_or_section("overlap", "all2all_backend"), "DBO needs a DeepEP all-to-all backend",
                           models::all2all_names_where([](const models::All2AllTraits& t) { return t.dbo; }));
  }
  if (ov.async_combine && !models::all2all_traits_of(p.backend).async_combine)
    r.at("overlap").fail(r.leaf_or_section("overlap", "all2all_backend"),
                         "async_combine needs a DeepEP backend (finalize_async)",
                         models::all2all_names_where([](const models::All2AllTraits& t) { return t.async_combine; }));

  if (!models::all2all_runs_on(models::all2all_traits_of(p.backend), s.hw.platform.stack))
    r.at("overlap").fail(r.leaf_or_section("overlap", "all2all_backend"),
                         fmt::format("{} runs on {} only; profile {} is a {} GPU (platform.stack)",
                                     models::all2all_traits_of(p.backend).name,
                                     models::all2all_platform_name(models::all2all_traits_of(p.backend)), s.hw.name,
                                     models::platform_name(s.hw.platform.stack)),
                         models::all2all_names_where([&](const models::All2AllTraits& t) {
                           return models::all2all_runs_on(t, s.hw.platform.stack);
                         }));
}

/** @brief A serving run's time bounds (output tokens, steps) and its trace's prompts. */
void check_serving_rules(RuleSites& r, const Scenario& s)
{
  // A serving run keeps every request and steps through every output token: bound its memory and time up front.
  const RequestWorkload& rq = s.requests;
  if (rq.num_prompts > 0 && rq.trace.empty()) {
    const double out_max = std::ceil(rq.random_output_len * (1.0 + rq.random_range_ratio));
    if (rq.num_prompts * out_max > max_serving_output_tokens)
      r.at("workload")
          .fail("num_prompts",
                fmt::format("{} prompts x up to {:g} output tokens = {:.3g} output tokens; a serving run's time grows "
                            "with its output tokens (docs/model.md), at most {:.3g} tokens",
                            rq.num_prompts, out_max, rq.num_prompts * out_max, max_serving_output_tokens),
                fmt::format("1..{:.0f} at this output length", std::floor(max_serving_output_tokens / out_max)));
    // the lengths are drawn uniformly around random_output_len: their expected sum, and the longest they can be
    if (const auto bad =
            serving_steps_problem(s, rq.num_prompts, double(rq.num_prompts) * rq.random_output_len, out_max))
      r.at("workload").fail("num_prompts", bad->message, bad->valid);
  }
  if (!rq.trace.empty() && rq.random_prefix_len > 0)
    r.at("workload")
        .fail("random_prefix_len", "a trace gives whole prompts: no shared prefix is drawn for them", "0 with a trace");
}

/** @brief The single-step workload: tokens split into decoding requests of 1 + k tokens (speculative decoding), drawn
 *  routing's token bound, the batch (defaulted here) fits the tokens and the prompts. */
void check_step_rules(RuleSites& r, Scenario& s)
{
  // A decoding request runs 1 + k tokens under speculative decoding (its last token and k drafts to verify).
  auto& w           = s.step;
  const bool decode = w.phase == models::Phase::decode;
  // A serving run schedules its own steps: its single-step workload keys are not run, so not held to 1 + k.
  const bool serving = s.requests.num_prompts > 0 || !s.requests.trace.empty();
  const int q        = decode && !serving ? s.speculative.tokens_per_request() : 1;
  const long drawn   = long(s.parallel.ep) * w.tokens; // every token's experts drawn, one step
  if (!serving && s.cluster.routing.dist != models::RoutingDist::balanced && drawn > models::drawn_routing_tokens_max)
    r.at("workload")
        .fail(r.leaf_or_section("workload", "tokens_per_rank"),
              fmt::format("{} tokens on each of {} ranks under cluster.routing {}: drawn routing draws every token's "
                          "experts, bounded at ep x tokens_per_rank {} a step (models/BalancedRouting.hpp)",
                          w.tokens, s.parallel.ep, models::routing_dist_name(s.cluster.routing.dist),
                          models::drawn_routing_tokens_max),
              fmt::format("1..{} at ep {} with drawn routing; any count with cluster.routing balanced",
                          models::drawn_routing_tokens_max / s.parallel.ep, s.parallel.ep));
  if (w.batch == 0 && decode && w.tokens % q != 0)
    r.at("workload")
        .fail(
            r.leaf_or_section("workload", "tokens_per_rank"),
            fmt::format("{} tokens do not split into decoding requests of 1 + {} speculative tokens", w.tokens, q - 1),
            fmt::format("a multiple of {}", q));
  // Fewest prefill requests that hold the tokens: no request computes more than its context_len-token prompt.
  const int min_prefill_batch = (w.tokens + w.context_len - 1) / w.context_len;
  if (w.batch == 0)
    w.batch = decode ? w.tokens / q : min_prefill_batch;
  if (decode && long(w.batch) * q > w.tokens)
    r.at("workload")
        .fail("batch",
              fmt::format("{} decode requests need at least {} tokens, tokens_per_rank is {}", w.batch,
                          long(w.batch) * q, w.tokens),
              fmt::format("1..{}", w.tokens / q));
  if (w.phase == models::Phase::prefill && w.batch > w.tokens)
    r.at("workload")
        .fail("batch",
              fmt::format("{} prefill requests need at least one token each, tokens_per_rank is {}", w.batch, w.tokens),
              fmt::format("1..{}", w.tokens));
  // A prefill request computes tokens_per_rank / batch tokens of its context_len-token prompt (the rest is in the
  // KV cache already: a prefix-cache hit or earlier chunks); it cannot compute more than its prompt.
  if (w.phase == models::Phase::prefill && w.batch < min_prefill_batch)
    r.at("workload")
        .fail("batch",
              fmt::format("{} prefill requests of {} tokens each cannot hold {} new tokens ({:.4g} per request)",
                          w.batch, w.context_len, w.tokens, double(w.tokens) / w.batch),
              fmt::format("{}..{} at context_len {} (or a longer context_len)", min_prefill_batch, w.tokens,
                          w.context_len));
}

/** @brief Cross-key rules, each as vLLM enforces it (or as the deployment makes physically necessary). */
void check_rules(YamlMap& root, Sections& sec, Scenario& s)
{
  RuleSites r{root, sec};
  check_parallel_rules(r, s);
  check_expert_rules(r, s);
  check_head_split(r, s);
  check_overlap_rules(r, s);
  check_serving_rules(r, s);
  check_speculative_rules(r.at("speculative_config"), sec.count("speculative_config") > 0, s);
  apply_precision(root, r.at("precision"), sec.count("precision") > 0, s);
  check_step_rules(r, s);
}

/** @brief Scenario::step_fingerprint of the file's tree. Leaving a key in is always safe (fewer shapes shared);
 *  removing one that a step reads would share shapes that differ. */
std::string step_fingerprint(const YAML::Node& file)
{
  YAML::Node node = YAML::Clone(file);
  if (!node.IsMap())
    return {};
  node.remove("name");
  node.remove("sweep");
  for (const char* key : {"num_prompts", "max_concurrency", "request_rate", "burstiness", "random_input_len",
                          "random_prefix_len", "random_output_len", "random_range_ratio", "trace"})
    if (node["workload"].IsMap())
      node["workload"].remove(key);
  for (const char* key : {"step_trace", "exact_samples"})
    if (node["serving"].IsMap())
      node["serving"].remove(key);
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}
} // namespace

Scenario load_scenario(const std::string& path) { return load_scenario_node(load_yaml_file(path), path); }

Scenario load_scenario_node(const YAML::Node& file, const std::string& path)
{
  const InputDigest inputs; // the files the scenario names, by content: part of its step fingerprint
  Scenario s = load_scenario_unshared(file, path);
  // The files the keys named, as loaded (a relative path names different files from different folders).
  s.step_fingerprint = fmt::format("{}\nmodel {} ({} layers); profile {} ({}, {}); network {}; input files {}",
                                   step_fingerprint(file), s.model.name, s.model.num_layers, s.hw.name, s.hw.gpu,
                                   s.hw.provenance.date, s.network.name, inputs.hex(path));
  return s;
}

Scenario load_scenario_unshared(const YAML::Node& file, const std::string& path)
{
  YamlMap root(file, path, "");
  Scenario s;
  s.file = path;
  s.name = std::filesystem::path(path).stem().string();
  Sections sections;
  read_params(root, sections, s);
  check_rules(root, sections, s);
  if (s.parallel.ep > 1 || s.parallel.tp > 1) {
    // D and C, and the tensor-parallel all-reduces, need link facts: hwprofiles/network/<cluster.network or the
    // profile's name>.yaml.
    const std::string net = s.cluster.network.empty() ? s.hw.name : s.cluster.network;
    if (!std::filesystem::exists(resolve_data_file("hwprofiles/network", net)))
      root.fail(sections.count("cluster") ? "cluster" : "hardware",
                fmt::format("no network facts '{}' for ep {} / tp {} (hwprofiles/network/{}.yaml): set "
                            "cluster.network",
                            net, s.parallel.ep, s.parallel.tp, net),
                list_data_files("hwprofiles/network").empty()
                    ? std::string("a network facts file")
                    : fmt::format("one of: {}", fmt::join(list_data_files("hwprofiles/network"), ", ")));
    s.network = load_network_facts(net);
  }
  return s;
}

} // namespace dbosim

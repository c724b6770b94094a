/* dbosim — the scenario keys of the cluster section: network facts, fat-tree oversubscription, expert
 * routing and placement. Declared with config/ParamHelpers. */
#include "config/ParamHelpers.hpp"
#include "config/RoutingHistogram.hpp"
#include "config/YamlMap.hpp"

#include <filesystem>

namespace dbosim {

void add_cluster_params(std::vector<ParamDecl>& p);

namespace {

/** @brief cluster.routing_histogram: a YAML file `{weights: [w0, w1, ...], source: "..."}`, one weight per routed
 *  expert (checked against the model when the plan is built); a relative path is relative to the scenario. */
void read_histogram(YamlMap& m, const std::string& leaf, Scenario& s)
{
  std::string path = m.get_string(leaf);
  if (!path.empty() && path.front() != '/')
    path = (std::filesystem::path(m.file()).parent_path() / path).lexically_normal().string();
  if (!std::filesystem::exists(path))
    m.fail(leaf, fmt::format("histogram file '{}' does not exist", path), "a YAML file {weights: [...], source: ...}");
  s.cluster.routing.histogram = load_routing_histogram(path);
  s.cluster.routing_histogram = path;
}

} // namespace

void add_cluster_params(std::vector<ParamDecl>& p)
{
  using models::Placement;
  using models::RoutingDist;
  using params::double_param;
  using params::enum_param;
  using params::int_param;
  using params::string_param;
  ParamDecl network = string_param(
      "cluster.network", "", "a name in hwprofiles/network/ or a path",
      "Link facts of the cluster models; empty = the hardware profile's name; a relative path is relative to the "
      "scenario",
      [](Scenario & s) -> auto& { return s.cluster.network; });
  network.read = [](YamlMap& m, const std::string& leaf, Scenario& s) {
    s.cluster.network = relative_to_file(m, m.get_string(leaf));
  };
  p.push_back(std::move(network));
  p.push_back(double_param(
      "cluster.oversubscription", "ratio", 1.0, 1.0, 64.0,
      "Fat tree: leaf down-link over up-link bandwidth (1 = non-blocking)",
      [](Scenario & s) -> auto& { return s.cluster.oversubscription; }));
  p.push_back(enum_param<RoutingDist>(
      "cluster.routing",
      {{"balanced", RoutingDist::balanced},
       {"uniform", RoutingDist::uniform},
       {"zipf", RoutingDist::zipf},
       {"histogram", RoutingDist::histogram}},
      RoutingDist::balanced,
      "Expert choice of each token: expected values (all ranks symmetric), uniform "
      "draws, Zipf(alpha) popularity, or a histogram file",
      [](Scenario & s) -> auto& { return s.cluster.routing.dist; }));
  p.push_back(double_param(
      "cluster.zipf_alpha", "", 1.0, 0.0, 8.0, "Zipf exponent of expert popularity",
      [](Scenario & s) -> auto& { return s.cluster.routing.zipf_alpha; }));
  p.push_back({"cluster.routing_histogram", "path", "", "none", "a YAML file {weights: [...], source: ...}",
               "Expert popularity weights, one per routed expert (cluster.routing: histogram)",
               [](Scenario& s) {
                 s.cluster.routing.histogram.clear();
                 s.cluster.routing_histogram.clear();
               },
               read_histogram});
  p.push_back(enum_param<Placement>(
      "cluster.placement", {{"contiguous", Placement::contiguous}, {"eplb", Placement::eplb}}, Placement::contiguous,
      "Expert placement: contiguous blocks, or EPLB redundant replicas",
      [](Scenario & s) -> auto& { return s.cluster.routing.placement; }));
  p.push_back(enum_param<ExpertLoadSetting>(
      "cluster.expert_load",
      {{"auto", ExpertLoadSetting::automatic},
       {"eplb_residual", ExpertLoadSetting::eplb_residual},
       {"no_eplb", ExpertLoadSetting::no_eplb},
       {"ideal", ExpertLoadSetting::ideal}},
      ExpertLoadSetting::automatic,
      "Expert load over the EP ranks of a step priced for one rank (run, serving, sweep, plan): auto (eplb_residual "
      "under cluster.placement eplb, else no_eplb), eplb_residual (the imbalance EPLB leaves), no_eplb (the imbalance "
      "without EPLB), both TensorRT-LLM's DeepSeek-R1 measurement (models/ExpertImbalance.hpp), or ideal (balanced)",
      [](Scenario & s) -> auto& { return s.cluster.expert_load; }));
  p.push_back(int_param(
      "cluster.redundant_experts", "experts", 0, 0, 1 << 16,
      "EPLB: extra expert replicas over the EP group (experts + these must divide over ep)",
      [](Scenario & s) -> auto& { return s.cluster.routing.redundant_experts; }));
  p.push_back(int_param(
      "cluster.routing_groups", "groups", 0, 0, 1 << 16,
      "Group-limited routing: expert groups (0 = off; DeepSeek-V3: 8)",
      [](Scenario & s) -> auto& { return s.cluster.routing.groups; }));
  p.push_back(int_param(
      "cluster.routing_topk_groups", "groups", 0, 0, 1 << 16,
      "Group-limited routing: groups each token may use (DeepSeek-V3: 4)",
      [](Scenario & s) -> auto& { return s.cluster.routing.topk_groups; }));
}

models::ExpertLoadModel expert_load_model(const ClusterConfig& c)
{
  switch (c.expert_load) {
  case ExpertLoadSetting::eplb_residual:
    return models::ExpertLoadModel::eplb_residual;
  case ExpertLoadSetting::no_eplb:
    return models::ExpertLoadModel::no_eplb;
  case ExpertLoadSetting::ideal:
    return models::ExpertLoadModel::ideal;
  case ExpertLoadSetting::automatic:
    break;
  }
  return c.routing.placement == models::Placement::eplb ? models::ExpertLoadModel::eplb_residual
                                                        : models::ExpertLoadModel::no_eplb;
}

} // namespace dbosim

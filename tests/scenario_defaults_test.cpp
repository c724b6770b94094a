/* The parameter table (config/ScenarioParams, `dbosim run --help-params`) is the source of a scenario's defaults:
 * a Scenario built in code holds what the table's default sets, key by key. */
#include "config/EngineTable.hpp"
#include "config/ScenarioParams.hpp"
#include "hw/HwProfile.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <tuple>

using namespace dbosim;

namespace {

auto routing_fields(const models::RoutingSpec& r)
{
  return std::tie(r.dist, r.zipf_alpha, r.histogram, r.placement, r.redundant_experts, r.groups, r.topk_groups, r.seed,
                  r.hot_rank_load);
}

/** The first part of `a` and `b` that differs, by name; empty when every part the table sets is the same. */
std::string first_difference(const Scenario& a, const Scenario& b)
{
  const ClusterConfig& ca = a.cluster;
  const ClusterConfig& cb = b.cluster;
  if (std::tie(ca.nodes, ca.gpus_per_node, ca.network, ca.oversubscription, ca.routing_histogram, ca.expert_load) !=
          std::tie(cb.nodes, cb.gpus_per_node, cb.network, cb.oversubscription, cb.routing_histogram, cb.expert_load) ||
      routing_fields(ca.routing) != routing_fields(cb.routing))
    return "cluster";
  if (std::tie(a.parallel.dp, a.parallel.tp, a.parallel.ep, a.parallel.backend) !=
      std::tie(b.parallel.dp, b.parallel.tp, b.parallel.ep, b.parallel.backend))
    return "parallel";
  if (a.step != b.step)
    return "step (workload.phase, tokens_per_rank, context_len, batch)";
  if (!(a.overlap == b.overlap))
    return "overlap";
  if (!(a.execution == b.execution))
    return "execution";
  if (std::tie(a.speculative.method, a.speculative.num_speculative_tokens, a.speculative.acceptance_rate) !=
      std::tie(b.speculative.method, b.speculative.num_speculative_tokens, b.speculative.acceptance_rate))
    return "speculative_config";
  if (!(a.requests == b.requests))
    return "workload (the request stream)";
  if (!(a.scheduler == b.scheduler))
    return "scheduler";
  if (!(a.serving == b.serving))
    return "serving";
  if (&engine_row(a.engine) != &engine_row(b.engine))
    return "engine";
  if (std::tie(a.name, a.seed, a.sweep_axes) != std::tie(b.name, b.seed, b.sweep_axes))
    return "name, seed or sweep";
  return {};
}

} // namespace

TEST_CASE("config::ScenarioParams: a Scenario's member defaults are the parameter table's", "[quick]")
{
  const Scenario built;
  // Written apart from the table on purpose: a Scenario built in code prices a step of no context unless it says
  // one; a scenario file gets the table's 4096.
  const std::set<std::string> apart{"workload.context_len"};
  int checked = 0;
  for (const ParamDecl& p : scenario_params()) {
    if (p.required() || apart.count(p.key))
      continue;
    Scenario defaulted = built;
    p.set_default(defaulted);
    INFO(p.key << " (default " << p.default_text << ")");
    CHECK(first_difference(built, defaulted).empty());
    ++checked;
  }
  CHECK(checked > 50);
  SECTION("the check sees a member default that drifts from the table")
  {
    Scenario drifted             = built;
    drifted.overlap.dbo_comm_sms = models::vllm_dbo_comm_sms + 1;
    drifted.scheduler.block_size += 1;
    CHECK(first_difference(built, drifted) == "overlap");
  }
}

TEST_CASE("config::ScenarioParams: overlap.dbo_comm_sms and the platform rule share vLLM's default", "[quick]")
{
  CHECK(OverlapConfig{}.dbo_comm_sms == models::vllm_dbo_comm_sms);
  CHECK(models::PlatformRules{}.dbo_comm_sms == models::vllm_dbo_comm_sms);
  for (const ParamDecl& p : scenario_params())
    if (p.key == "overlap.dbo_comm_sms")
      CHECK(p.default_text == std::to_string(models::vllm_dbo_comm_sms));
}

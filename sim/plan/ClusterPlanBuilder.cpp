#include "sim/plan/ClusterPlanBuilder.hpp"

#include "base/InputError.hpp"
#include "models/All2AllModel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace dbosim::sim {
namespace {

using models::OpKind;

struct MlpCost {
  double duration_us;
  double partitioned_us;
};

/** A rank's MLP cost by its tokens (rows / top_k), each count priced once. */
class MlpCosts {
public:
  MlpCosts(const models::StepShape& step, const CostSource& costs, const StepPlan& base)
      : step_(step), costs_(costs), comm_sms_(base.gpu.comm_sms), partition_(base.gpu.comm_sms > 0),
        compute_sms_(base.gpu.sm_count - base.gpu.comm_sms)
  {
  }

  MlpCost operator()(int tokens)
  {
    auto it = cache_.find(tokens);
    if (it != cache_.end())
      return it->second;
    models::StepShape shape;
    shape.phase       = step_.phase;
    shape.tokens      = tokens;
    shape.batch       = std::max(1, tokens);
    shape.context_len = step_.context_len;
    MlpCost c{0, 0};
    auto set = [&](const models::OpCost& op) {
      c.duration_us    = op.duration_us;
      c.partitioned_us = partition_ ? costs_.on_sms(op, compute_sms_) : op.duration_us;
    };
    if (costs_.mlp)
      set(costs_.mlp(shape));
    else
      for (const models::OpCost& op : costs_.layer(shape, true, comm_sms_).ops)
        if (op.kind == OpKind::MLP)
          set(op);
    return cache_.emplace(tokens, c).first->second;
  }

private:
  const models::StepShape& step_;
  const CostSource& costs_;
  int comm_sms_;
  bool partition_;
  int compute_sms_;
  std::map<int, MlpCost> cache_;
};

void check_cluster_fits(const Deployment& sc)
{
  const ClusterConfig& cc = sc.cluster;
  const int ep            = sc.parallel.ep;
  if (ep > cc.nodes * cc.gpus_per_node)
    throw InputError(sc.file, 0, 0, "cluster.nodes",
                     fmt::format("ep={} ranks need more GPUs than {} nodes x {}", ep, cc.nodes, cc.gpus_per_node),
                     fmt::format(">= {} nodes", (ep + cc.gpus_per_node - 1) / cc.gpus_per_node));
}

/** The experts' placement on the ranks, and its note. */
models::ExpertPlacement expert_placement(const Deployment& sc, const models::RoutingSpec& spec, ClusterPlan& cp)
{
  models::ExpertPlacement placement;
  try {
    placement = models::place_experts(spec, sc.model.num_routed_experts, sc.parallel.ep);
  } catch (const std::invalid_argument& e) {
    throw InputError(sc.file, 0, 0,
                     spec.placement == models::Placement::eplb ? "cluster.redundant_experts" : "cluster.placement",
                     e.what(), "experts + redundant divisible by ep; redundant experts only with eplb");
  }
  cp.notes.push_back(fmt::format(
      "routing {} ({}), placement {} with {} redundant experts, seed {}", models::routing_dist_name(spec.dist),
      spec.dist == models::RoutingDist::zipf ? fmt::format("alpha {:g}", spec.zipf_alpha) : std::string("-"),
      models::placement_name(spec.placement), spec.redundant_experts, spec.seed));
  return placement;
}

/** What routing micro-batch `u` costs: its tokens routed to the ranks, then per rank its MLP (its received rows) and
 *  its part of D and C, written into the rank's plan and added to its load. */
struct UbatchRouting {
  const Deployment& sc;
  const models::RoutingSpec& spec;
  const models::ExpertPlacement& placement;
  const models::All2AllContext& ctx;
  MlpCosts& mlp_for;
};

/** `rm`: the previous micro-batch's rows, whose buffers this one's reuse. */
void route_ubatch(const UbatchRouting& ur, int u, int tokens, models::RoutingRows& rm, std::vector<StepPlan>& per_rank,
                  ClusterPlan& cp)
{
  const Deployment& sc       = ur.sc;
  const models::ModelSpec& m = sc.model;
  const int ep               = sc.parallel.ep;
  try {
    rm = models::route_token_rows(ur.spec, ur.placement, m.num_routed_experts, m.top_k, ep, cp.gpus_per_node, tokens,
                                  static_cast<std::uint64_t>(u), std::move(rm));
  } catch (const std::invalid_argument& e) {
    throw InputError(sc.file, 0, 0, "cluster.routing", e.what(),
                     "a histogram with one weight per routed expert; groups dividing the experts");
  }
  const auto d = models::all2all_per_rank(sc.parallel.backend, OpKind::D, rm, ur.ctx);
  const auto c = models::all2all_per_rank(sc.parallel.backend, OpKind::C, rm, ur.ctx);
  for (int r = 0; r < ep; ++r) {
    std::vector<OpSpec>& ops = per_rank[r].ubatches[u].moe;
    const MlpCost mc         = ur.mlp_for(static_cast<int>(std::lround(rm.expert_rows[r] / m.top_k)));
    if (OpSpec* o = find_spec(ops, OpKind::MLP)) {
      o->duration_us             = mc.duration_us;
      o->partitioned_duration_us = mc.partitioned_us;
    }
    set_collective_us(ops, OpKind::D, d[r].duration_us, d[r].recv_us);
    set_collective_us(ops, OpKind::C, c[r].duration_us, c[r].recv_us);
    RankLoad& l = cp.ranks[r];
    l.expert_rows += rm.expert_rows[r];
    l.mlp_us += mc.duration_us;
    l.dispatch_us += d[r].duration_us;
    l.combine_us += c[r].duration_us;
  }
}

/** Rank classes: ranks whose every op duration is identical replay identically (the engine is deterministic and the
 *  collectives couple ranks only through their end times). */
void group_rank_classes(std::vector<StepPlan>& per_rank, ClusterPlan& cp)
{
  std::map<std::vector<double>, int> class_of;
  for (int r = 0; r < cp.ep; ++r) {
    std::vector<double> key;
    for (const UbatchCosts& ub : per_rank[r].ubatches)
      for (const OpSpec& o : ub.moe) {
        key.push_back(o.duration_us);
        key.push_back(o.partitioned_duration_us);
        key.push_back(o.flight_us);
      }
    auto [it, fresh] = class_of.emplace(std::move(key), cp.num_classes());
    if (fresh) {
      cp.classes.push_back(std::move(per_rank[r]));
      cp.class_rank.push_back(r);
    }
    cp.ranks[r].rank_class  = it->second;
    cp.ranks[r].own_work_us = cp.ranks[r].mlp_us + cp.ranks[r].dispatch_us + cp.ranks[r].combine_us;
  }
}

} // namespace

ClusterPlan build_cluster_plan(const Deployment& sc, const models::StepShape& step, const CostSource& costs,
                               const models::NetworkFacts& net, const PlanOptions& opt)
{
  check_cluster_fits(sc);
  const int ep = sc.parallel.ep;
  ClusterPlan cp;
  cp.ep                      = ep;
  const StepPlan base        = build_step_plan(sc, step, costs, opt);
  const models::CommSetup cs = comm_setup(sc, base.gpu.comm_sms);
  cp.gpus_per_node           = cs.gpus_per_node;

  const models::RoutingSpec spec          = cs.routing;
  const models::ExpertPlacement placement = expert_placement(sc, spec, cp);
  const models::All2AllContext ctx{&sc.model, &sc.hw, &net, cs.gpus_per_node, cs.comm_sms, cs.oversubscription};
  MlpCosts mlp_for(step, costs, base);
  const UbatchRouting routing{sc, spec, placement, ctx, mlp_for};

  std::vector<StepPlan> per_rank(ep, base);
  cp.ranks.assign(ep, RankLoad{});
  models::RoutingRows rows;
  for (int u = 0; u < base.num_ubatches(); ++u)
    if (!base.ubatches[u].moe.empty() && ep > 1)
      route_ubatch(routing, u, base.ubatches[u].tokens, rows, per_rank, cp);

  group_rank_classes(per_rank, cp);
  cp.notes.push_back(fmt::format("{} ranks in {} class(es) of identical ranks: {} simulated", ep, cp.num_classes(),
                                 cp.num_classes() == 1 ? "one (exact symmetry shortcut)" : "one per class"));
  for (StepPlan& p : cp.classes)
    p.notes.insert(p.notes.end(), cp.notes.begin(), cp.notes.end());
  return cp;
}

} // namespace dbosim::sim

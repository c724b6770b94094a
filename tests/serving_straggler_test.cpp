/* Stragglers as they happen in a serving run: the step waits for the DP rank with the most own work (attention
 * over its KV lengths, the work outside the layers), the others spin for the difference; the busiest EP rank under
 * the published post-EPLB residual (models/ExpertImbalance) makes the MoE layers slower by the expected factor; the
 * ITL split by cause sums to the ITL. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "config/ScenarioLoader.hpp"
#include "models/ExpertImbalance.hpp"
#include "models/ExpertRouting.hpp"
#include "models/FfnOps.hpp"
#include "models/OpCost.hpp"
#include "opcost_test_support.hpp"
#include "serving/EngineOracle.hpp"
#include "serving_test_support.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace dbosim;
using namespace dbosim::serving;
using dbosim::test::ClosedFormOracle;
using dbosim::test::small_params;

namespace {

/** The closed-form oracle plus each rank's own work: attention per_kv_us x batch x context, step work w_us; a step
 *  is base + tokens + that attention + w_us, so the step = the slowest rank's attention + the rest. */
class StragglerOracle : public ClosedFormOracle {
public:
  double w_us = 50;
  StragglerOracle()
  {
    base_us      = 1000;
    per_token_us = 10;
    per_kv_us    = 0.05;
  }
  double attention_us(const StepKey& k) const { return per_kv_us * k.batch * k.context_len; }
  std::vector<StepTime> simulate(const std::vector<StepKey>& keys) override
  {
    std::vector<StepTime> out = ClosedFormOracle::simulate(keys);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      out[i].step_us += w_us;
      out[i].step_work_us = w_us;
    }
    return out;
  }
  RankWork rank_work(const StepKey& k) override { return {attention_us(k), w_us, 0}; }
};

const models::NetworkFacts& h800_net()
{
  static const models::NetworkFacts net = load_network_facts("h800");
  return net;
}

models::ParallelSpec ep8(models::All2AllBackend b)
{
  models::ParallelSpec p;
  p.dp = 8, p.ep = 8, p.tp = 1, p.backend = b;
  return p;
}

models::StepShape shape(models::Phase ph, int tokens, int context)
{
  models::StepShape s;
  s.phase = ph, s.tokens = tokens, s.batch = ph == models::Phase::decode ? tokens : 1, s.context_len = context;
  return s;
}

const models::OpCost& op(const models::LayerCosts& lc, models::OpKind k)
{
  const models::OpCost* o = lc.find(k);
  REQUIRE(o != nullptr);
  return *o;
}

} // namespace

TEST_CASE("serving::stragglers: two DP ranks with different KV lengths: step = the slowest rank's attention + the "
          "rest, spin = the difference",
          "[quick]")
{
  StragglerOracle o;
  ServingParams p = small_params(2);
  // Round-robin: request 0 (1000-token prompt) on rank 0, request 1 (3000) on rank 1; both decode 10 tokens.
  std::vector<Request> reqs{{0, 0.0, 1000, 10}, {1, 0.0, 3000, 10}};
  StepCache cache;
  const ServingResult res = run_serving(p, reqs, 0, o, cache);
  REQUIRE(res.live.size() == 2);
  long decode_steps = 0;
  for (const StepRecord& s : res.steps) {
    CHECK(s.critical_rank == 1); // the longer KV every step
    CHECK(s.exact.context_len >= 3000);
    CHECK(s.step_us == Approx(o.time_us(s.bucketed) + o.w_us).epsilon(1e-12));
    if (s.exact.phase != models::Phase::decode)
      continue;
    ++decode_steps;
    // Each rank decodes one token over its own KV: 2000 more keys on rank 1, every step.
    CHECK(s.attention_spin_us == Approx(o.per_kv_us * 2000).epsilon(1e-12));
  }
  CHECK(decode_steps == 9);
  // Request 0 waits for rank 1's attention in every gap; request 1 never waits.
  const LiveRequest& fast = res.live[0];
  const LiveRequest& slow = res.live[1];
  REQUIRE(fast.tokens.gaps() == 9);
  CHECK(fast.itl_split.attention_spin_s * 1e6 / 9 == Approx(o.per_kv_us * 2000).epsilon(1e-9));
  CHECK(slow.itl_split.attention_spin_s == 0);
  for (const LiveRequest* l : {&fast, &slow}) {
    const std::vector<double> gaps = itl_gaps_s(*l, res.clock);
    const double itl_s             = std::accumulate(gaps.begin(), gaps.end(), 0.0);
    CHECK(l->itl_split.total_s() == Approx(itl_s).epsilon(1e-12));
    CHECK(l->itl_split.step_work_s == Approx(9 * (o.w_us + p.host_gap_us) * 1e-6).epsilon(1e-12));
    CHECK(l->itl_split.expert_spin_s == 0);
  }
  // The fast rank's layers are the slow rank's less the attention it did not do.
  CHECK(slow.itl_split.layers_s - fast.itl_split.layers_s == Approx(9 * o.per_kv_us * 2000 * 1e-6).epsilon(1e-9));
}

TEST_CASE("serving::stragglers: without per-rank work the busiest rank by tokens sets the step, as before", "[quick]")
{
  StragglerOracle o;
  ServingParams p = small_params(2);
  p.per_rank_work = false;
  std::vector<Request> reqs{{0, 0.0, 1000, 10}, {1, 0.0, 3000, 10}};
  StepCache cache;
  const ServingResult res = run_serving(p, reqs, 0, o, cache);
  for (const StepRecord& s : res.steps)
    if (s.exact.phase == models::Phase::decode) {
      CHECK(s.critical_rank == 0); // the first of the tied busiest ranks: its KV is the short one
      CHECK(s.attention_spin_us == 0);
    }
}

TEST_CASE("serving::stragglers: the summary's ITL split sums to the mean ITL", "[quick]")
{
  StragglerOracle o;
  ServingParams p = small_params(3);
  std::vector<Request> reqs;
  for (int i = 0; i < 12; ++i)
    reqs.push_back({i, 0.001 * i, 200 + 300 * (i % 5), 6 + i % 4});
  StepCache cache;
  const ServingResult res = run_serving(p, reqs, 4, o, cache);
  const auto m            = serving_metrics(res, 3);
  const auto& sp          = m["itl_split"];
  CHECK(sp["mean_itl_ms"].get<double>() == Approx(m["mean_itl_ms"].get<double>()).epsilon(1e-12));
  const double sum = sp["layers_ms"].get<double>() + sp["step_work_ms"].get<double>() +
                     sp["straggler_spin_ms"].get<double>() + sp["draft_ms"].get<double>() +
                     sp["other_ms"].get<double>();
  CHECK(sum == Approx(m["mean_itl_ms"].get<double>()).epsilon(1e-12));
  CHECK(sp["other_ms"].get<double>() == 0); // colocated: every gap is steps of the request's rank
  CHECK(sp["straggler_spin_ms"].get<double>() ==
        Approx(sp["attention_spin_ms"].get<double>() + sp["expert_spin_ms"].get<double>()));
  CHECK(sp["straggler_spin_ms"].get<double>() > 0); // unequal prompts on the three ranks
  CHECK(serving_text(m).find("straggler spin") != std::string::npos);
}

TEST_CASE("models::ExpertImbalance: the expected maximum of normals and the published TensorRT-LLM figures", "[quick]")
{
  const double pi = std::acos(-1.0);
  CHECK(models::expected_max_std_normal(1) == 0);
  CHECK(models::expected_max_std_normal(2) == Approx(1 / std::sqrt(pi)).epsilon(1e-9));
  CHECK(models::expected_max_std_normal(3) == Approx(3 / (2 * std::sqrt(pi))).epsilon(1e-9));
  // sigma_sys from the EP32 row: (52/1024)^2 less the routing noise of 1024 copies over 32 ranks.
  CHECK(models::systematic_rel_std(models::trtllm_r1_eplb_ep32) ==
        Approx(std::sqrt(std::pow(52.0 / 1024, 2) - (1 - 1.0 / 32) / 1024)).epsilon(1e-12));
  using models::ExpertLoadModel;
  // The model at the measurement's own batch reproduces the published max/mean (1.109; 1.115 at EP36) within 1%.
  const double at32 = models::hot_rank_load(ExpertLoadModel::eplb_residual, 32, 1024, 8);
  const double at36 = models::hot_rank_load(ExpertLoadModel::eplb_residual, 36, 1024, 8);
  CHECK(at32 == Approx(1 + models::trtllm_r1_eplb_ep32.imbalance_ratio).epsilon(0.01));
  CHECK(at36 == Approx(1 + models::trtllm_r1_eplb_ep36.imbalance_ratio).epsilon(0.01));
  CHECK(at36 > at32);
  // Fewer copies per rank: more routing noise, a hotter busiest rank; ideal routing and ep = 1: none.
  CHECK(models::hot_rank_load(ExpertLoadModel::eplb_residual, 8, 8, 8) >
        models::hot_rank_load(ExpertLoadModel::eplb_residual, 8, 8192, 8));
  CHECK(models::hot_rank_load(ExpertLoadModel::ideal, 32, 1024, 8) == 1);
  CHECK(models::hot_rank_load(ExpertLoadModel::eplb_residual, 1, 1024, 8) == 1);
  CHECK(models::hot_rank_load(ExpertLoadModel::eplb_residual, 8, 0, 8) == 1);
}

TEST_CASE("models::ExpertRouting: balanced routing with a hot rank keeps every token's top_k copies", "[quick]")
{
  models::RoutingSpec spec;
  spec.hot_rank_load = 1.25;
  const int ep = 8, experts = 256, top_k = 8, tokens = 64;
  const auto pl          = models::place_experts(spec, experts, ep);
  const auto rm          = models::route_tokens(spec, pl, experts, top_k, ep, 8, tokens);
  const double per_rank  = double(tokens) * top_k; // copies each rank sends
  const double mean_rows = per_rank;               // and receives on average
  CHECK(rm.expert_rows[0] == Approx(1.25 * mean_rows).epsilon(1e-12));
  for (int d = 1; d < ep; ++d)
    CHECK(rm.expert_rows[d] == Approx((ep - 1.25) / (ep - 1) * mean_rows).epsilon(1e-12));
  for (int s = 0; s < ep; ++s)
    CHECK(std::accumulate(rm.copies[s].begin(), rm.copies[s].end(), 0.0) == Approx(per_rank).epsilon(1e-12));
}

TEST_CASE("models::layer_costs: the post-EPLB residual slows the MoE op by the expected factor", "[quick]")
{
  const models::HwProfile hw = test::h200_like();
  const models::ModelSpec v3 = load_model_zoo("deepseek-v3");
  models::CommSetup ideal;
  ideal.net                  = &h800_net();
  models::CommSetup residual = ideal;
  residual.expert_load       = models::ExpertLoadModel::eplb_residual;

  SECTION("prefill, 4096 tokens per rank: the grouped GEMMs are compute-bound, time follows the rows")
  {
    const auto par = ep8(models::All2AllBackend::deepep_high_throughput);
    const auto s   = shape(models::Phase::prefill, 4096, 4096);
    const auto a   = models::layer_costs(v3, hw, par, s, true, ideal);
    const auto b   = models::layer_costs(v3, hw, par, s, true, residual);
    // Each rank receives 4096 x 8 copies on average.
    const double f = models::hot_rank_load(models::ExpertLoadModel::eplb_residual, 8, 4096.0 * 8, 32);
    CHECK(a.hot_rank_load == 1);
    CHECK(a.straggler_us == 0);
    CHECK(b.hot_rank_load == Approx(f).epsilon(1e-12));
    CHECK(f > 1.03);
    CHECK(f < 1.10);
    CHECK(op(b, models::OpKind::MLP).duration_us / op(a, models::OpKind::MLP).duration_us == Approx(f).epsilon(0.01));
    CHECK(op(b, models::OpKind::D).duration_us > op(a, models::OpKind::D).duration_us);
    CHECK(op(b, models::OpKind::C).duration_us > op(a, models::OpKind::C).duration_us);
    // The other ops do not see the expert load.
    CHECK(op(b, models::OpKind::A1).duration_us == op(a, models::OpKind::A1).duration_us);
    CHECK(op(b, models::OpKind::S).duration_us == op(a, models::OpKind::S).duration_us);
    double excess = 0;
    for (models::OpKind k : {models::OpKind::D, models::OpKind::MLP, models::OpKind::C})
      excess += op(b, k).duration_us - op(a, k).duration_us;
    CHECK(b.straggler_us == Approx(excess).epsilon(1e-12));
  }
  SECTION("decode, 1 token per rank: the experts are weight-bound, time follows the active experts")
  {
    const auto par = ep8(models::All2AllBackend::deepep_low_latency);
    const auto s   = shape(models::Phase::decode, 1, 1024);
    const auto a   = models::layer_costs(v3, hw, par, s, true, ideal);
    const auto b   = models::layer_costs(v3, hw, par, s, true, residual);
    const double f = models::hot_rank_load(models::ExpertLoadModel::eplb_residual, 8, 8.0, 32);
    CHECK(b.hot_rank_load == Approx(f).epsilon(1e-12));
    // 8 group tokens: a slot is missed with (1 - 8/256)^8; the busiest rank as if f x 8 tokens reached it.
    const double miss    = 1.0 - 8.0 / 256;
    const double active  = 32 * (1 - std::pow(miss, 8));
    const double hot     = 32 * (1 - std::pow(miss, 8 * f));
    const auto base_load = models::expert_load(v3, par, s);
    CHECK(base_load.active_experts == Approx(active).epsilon(1e-12));
    CHECK(models::scaled_expert_load(v3, base_load, 0, 8, f).active_experts == Approx(hot).epsilon(1e-12));
    CHECK(op(b, models::OpKind::MLP).duration_us / op(a, models::OpKind::MLP).duration_us ==
          Approx(hot / active).epsilon(0.05));
  }
}

TEST_CASE("serving::stragglers: every verb prices its steps with one expert load, from EPLB unless set", "[quick]")
{
  test::TempDir dir;
  const std::string yaml  = R"(model: deepseek-v3
hardware: h200
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 2, random_input_len: 300, random_output_len: 6}
overlap: {all2all_backend: deepep_low_latency}
seed: 3
)";
  const std::string node  = "cluster: {nodes: 1, gpus_per_node: 8";
  const Scenario residual = load_scenario(dir.write("r.yaml", yaml + node + ", placement: eplb}\n"));
  const Scenario no_eplb  = load_scenario(dir.write("n.yaml", yaml + node + "}\n"));
  const Scenario ideal = load_scenario(dir.write("i.yaml", yaml + node + ", placement: eplb, expert_load: ideal}\n"));
  // auto: EPLB's residual under placement eplb, the no-EPLB measurement under contiguous placement (the default).
  CHECK(sim::comm_setup(residual, 0).expert_load == models::ExpertLoadModel::eplb_residual);
  CHECK(sim::comm_setup(no_eplb, 0).expert_load == models::ExpertLoadModel::no_eplb);
  CHECK(sim::comm_setup(ideal, 0).expert_load == models::ExpertLoadModel::ideal);
  // A single step (no serving workload) takes the same load as the serving run of the same deployment.
  Scenario single             = residual;
  single.requests.num_prompts = 0;
  CHECK(sim::comm_setup(single, 0).expert_load == models::ExpertLoadModel::eplb_residual);

  const StepKey key{{models::Phase::decode, 16, 16, 1024}};
  auto plan_of           = [&](const Scenario& s) { return sim::build_step_plan(s, key, sim::model_cost_source(s)); };
  const sim::StepPlan pr = plan_of(residual);
  const sim::StepPlan pi = plan_of(ideal);
  auto noted             = [](const sim::StepPlan& p, const std::string& what) {
    return std::any_of(p.notes.begin(), p.notes.end(),
                                   [&](const std::string& n) { return n.find(what) != std::string::npos; });
  };
  CHECK(noted(pr, "expert load eplb_residual: the busiest EP rank carries"));
  CHECK_FALSE(noted(pi, "expert load"));
  const double f = models::hot_rank_load(models::ExpertLoadModel::eplb_residual, 8, 16.0 * 8, 32);
  CHECK(pr.hot_rank_load == Approx(f).epsilon(1e-12));
  CHECK(pi.hot_rank_load == 1);
  CHECK(pi.expert_spin_us == 0);
  const auto* mlp_r = pr.ubatches[0].find(true, models::OpKind::MLP);
  const auto* mlp_i = pi.ubatches[0].find(true, models::OpKind::MLP);
  REQUIRE(mlp_r);
  REQUIRE(mlp_i);
  CHECK(mlp_r->duration_us > mlp_i->duration_us);
  CHECK(pr.expert_spin_us >= (mlp_r->duration_us - mlp_i->duration_us) * (pr.num_layers - pr.first_k_dense));
  // Each rank's own work at a key: attention over its KV, more with a longer KV; the same step work.
  const RankWork w_short = rank_work_here(residual, key);
  const RankWork w_long  = rank_work_here(residual, StepKey{{models::Phase::decode, 16, 16, 4096}});
  CHECK(w_short.attention_us > 0);
  CHECK(w_long.attention_us > w_short.attention_us);
  CHECK(w_long.step_work_us == w_short.step_work_us);
  CHECK(w_short.draft_us == 0);
  // The same A0 and A1 the engine's full plan runs, over every layer; the same step work.
  double attention = 0;
  for (const sim::UbatchCosts& u : pr.ubatches)
    for (models::OpKind k : {models::OpKind::A0, models::OpKind::A1})
      attention += u.find(false, k)->duration_us * pr.first_k_dense +
                   u.find(true, k)->duration_us * (pr.num_layers - pr.first_k_dense);
  CHECK(w_short.attention_us == Approx(attention).epsilon(1e-12));
  CHECK(w_short.step_work_us == pr.step_work_us);
}

TEST_CASE("serving::rank_work_here: costs kept across calls by their keys give each shape's own rank work", "[quick]")
{
  // With no SM partition the oracle keeps A0 and A1 by their kernels' keys (models::AttentionMemo: only the kernels
  // that read the context re-timed), the step's work by models::step_work_key (tokens, batch); under an SM partition
  // decode shapes' A0 by models::attention_a0_key. A rank's work with the memo must be the work without it (each op
  // costed whole), bit for bit, whatever shapes came first: MLA and GQA, with and without tensor parallelism (the
  // all-reduce after o_proj), with and without a partition.
  test::TempDir dir;
  struct Deploy {
    const char* yaml;
    bool partition;
  };
  const std::vector<Deploy> deployments{{R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 16}
overlap: {enable_dbo: false, all2all_backend: deepep_low_latency}
)",
                                         false},
                                        {R"(model: qwen3-30b-a3b
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 4, ep: 8, tp: 2}
workload: {phase: decode, tokens_per_rank: 16}
overlap: {enable_dbo: true, all2all_backend: deepep_low_latency}
)",
                                         false},
                                        {R"(model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: prefill, tokens_per_rank: 4096, context_len: 4096}
overlap: {enable_dbo: true, all2all_backend: deepep_high_throughput, dbo_comm_sms: 20}
)",
                                         true}};
  const std::vector<StepKey> keys{StepKey{{models::Phase::decode, 16, 16, 4096}},
                                  StepKey{{models::Phase::decode, 16, 16, 1000}},
                                  StepKey{{models::Phase::decode, 16, 12, 1000}},
                                  StepKey{{models::Phase::decode, 9, 9, 333}},
                                  StepKey{{models::Phase::prefill, 300, 20, 900, 16, 16, 1200}},
                                  StepKey{{models::Phase::prefill, 300, 20, 700, 16, 16, 5000}},
                                  StepKey{{models::Phase::prefill, 4096, 2, 3000}},
                                  StepKey{{models::Phase::decode, 16, 16, 77}}};
  for (const Deploy& d : deployments) {
    const Scenario s = load_scenario(dir.write("s.yaml", d.yaml));
    CAPTURE(s.model.name, s.parallel.tp, d.partition);
    RankWorkMemo memo;
    for (const StepKey& k : keys) {
      const RankWork kept  = rank_work_here(s, k, &memo);
      const RankWork fresh = rank_work_here(s, k);
      CHECK(kept.attention_us == fresh.attention_us);
      CHECK(kept.step_work_us == fresh.step_work_us);
    }
    CHECK(memo.step_work.size() == 5); // (16, 16) three times, (16, 12), (9, 9), (300, 20) twice, (4096, 2)
    if (!d.partition) {
      CHECK(memo.a0.empty());
      CHECK(memo.attention.keys().first == 4); // decode 16 (four shapes) and 9, prefill 300 (two) and 4096
      continue;
    }
    // DeepEP high-throughput holding 20 SMs: the 4,096-token prompt step splits (DBO) and runs beside it, so its ops
    // are costed whole with their parts (a prompt's A0 is not kept); the smaller steps do not split and are kept
    CHECK(memo.attention.keys().first == 3);
    CHECK(memo.a0.empty());
  }
}

TEST_CASE("serving::params: cluster.expert_load names its choices", "[quick]")
{
  test::TempDir dir;
  const std::string yaml = R"(model: deepseek-v3
hardware: h200
parallel: {dp: 8, ep: 8, tp: 1}
workload: {tokens_per_rank: 1}
cluster: {nodes: 1, gpus_per_node: 8, expert_load: zipf}
)";
  try {
    load_scenario(dir.write("x.yaml", yaml));
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("x.yaml:5") != std::string::npos);
    CHECK(what.find("cluster.expert_load") != std::string::npos);
    CHECK(what.find("auto, eplb_residual, no_eplb, ideal") != std::string::npos);
  }
}

TEST_CASE("models::hot_rank_load: without EPLB the busiest rank keeps the published max/mean at the row's batch",
          "[quick]")
{
  using models::ExpertLoadModel;
  const auto& row = models::trtllm_r1_no_eplb_ep32;
  // The row's own batch gives its max/mean back (the sigma is taken from it); the std route would give ~2.0.
  CHECK(models::hot_rank_load(ExpertLoadModel::no_eplb, row.ep, row.mean_copies_per_rank, row.slots_per_rank) ==
        Approx(1.0 + row.imbalance_ratio).epsilon(1e-9));
  const double by_std = 1.0 + row.std_copies_per_rank / row.mean_copies_per_rank * models::expected_max_std_normal(32);
  CHECK(by_std < 1.0 + row.imbalance_ratio - 0.4);
  // The EPLB residual stays well below it, and both grow as fewer copies reach a rank (routing noise).
  for (double c : {8.0, 64.0, 1024.0}) {
    const double with = models::hot_rank_load(ExpertLoadModel::eplb_residual, 32, c, 8);
    const double none = models::hot_rank_load(ExpertLoadModel::no_eplb, 32, c, 8);
    CHECK(none > with);
    CHECK(models::hot_rank_load(ExpertLoadModel::ideal, 32, c, 8) == 1.0);
  }
  CHECK(models::hot_rank_load(ExpertLoadModel::no_eplb, 32, 8.0, 8) >
        models::hot_rank_load(ExpertLoadModel::no_eplb, 32, 1024.0, 8));
  // More experts per rank average out part of the popularity spread: EP8's 32 per rank halve the systematic std.
  const double at8 = models::hot_rank_load(ExpertLoadModel::no_eplb, 8, 1e9, 32);
  CHECK(at8 - 1 ==
        Approx(models::systematic_rel_std_from_max(row) / 2 * models::expected_max_std_normal(8)).epsilon(1e-6));
  // The EPLB residual does not depend on the slots.
  CHECK(models::hot_rank_load(ExpertLoadModel::eplb_residual, 8, 64, 32) ==
        models::hot_rank_load(ExpertLoadModel::eplb_residual, 8, 64, 9));
  CHECK(models::expert_load_source_of(ExpertLoadModel::no_eplb).find("no EPLB") != std::string::npos);
}

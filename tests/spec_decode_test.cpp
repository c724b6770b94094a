/* Speculative decoding with DeepSeek MTP (speculative_config): accepted tokens per step in closed form, the
 * verification tokens against DBO's decode threshold, the draft module's cost (one pass per draft token), the
 * acceptance draws, and ITL/TPOT in the serving loop. */
#include "TempDir.hpp"
#include "base/InputError.hpp"
#include "config/ScenarioLoader.hpp"
#include "models/SpecDecode.hpp"
#include "serving/SpecAcceptance.hpp"
#include "serving_test_support.hpp"
#include "sim/plan/SpecDecodeStep.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dbosim;
using dbosim::test::TempDir;
using models::SpecDecodeSpec;
using models::SpecMethod;
using models::StepShape;

namespace {

SpecDecodeSpec mtp(int k, std::vector<double> rates) { return {SpecMethod::deepseek_mtp, k, std::move(rates)}; }

/** DeepSeek-V3 decode on 8 H200s (EP8), with `extra` appended (a speculative_config section). */
std::string dsv3_ep8(int tokens_per_rank, const std::string& extra)
{
  return "model: deepseek-v3\nhardware: h200\ncluster: {nodes: 1, gpus_per_node: 8}\nparallel: {dp: 8, ep: 8, tp: 1}\n"
         "workload: {phase: decode, tokens_per_rank: " +
         std::to_string(tokens_per_rank) +
         ", context_len: 4096}\noverlap: {enable_dbo: true, all2all_backend: deepep_low_latency}\n" + extra;
}

const std::string kMtp1 =
    "speculative_config: {method: deepseek_mtp, num_speculative_tokens: 1, acceptance_rate: 0.8}\n";

std::string error_of(const std::string& yaml)
{
  TempDir dir;
  const std::string path = dir.write("case.yaml", yaml);
  try {
    load_scenario(path);
  } catch (const InputError& e) {
    return std::string(e.what()).substr(path.size());
  }
  FAIL("scenario loaded but should have been rejected:\n" << yaml);
  return "";
}

/** A step's costs that only count micro-batches: enough for the DBO decision. */
sim::CostSource unit_costs()
{
  return sim::CostSource{[](const StepShape&, bool moe, int) {
                           models::LayerCosts lc;
                           lc.moe = moe;
                           for (models::OpKind k : {models::OpKind::A0, models::OpKind::A1, models::OpKind::MLP}) {
                             models::OpCost c;
                             c.kind        = k;
                             c.duration_us = 1;
                             lc.ops.push_back(c);
                           }
                           return lc;
                         },
                         [](const models::OpCost& c, int) { return c.duration_us; },
                         {}};
}

} // namespace

TEST_CASE("models::SpecDecode: expected accepted tokens per step = 1 + sum_i prod_{j<=i} a_j", "[quick]")
{
  CHECK(models::expected_accepted_tokens(SpecDecodeSpec{}) == 1.0); // off: one token per step
  CHECK(models::expected_accepted_tokens(mtp(1, {0.8})) == Approx(1.8));
  // k = 2 at 0.8 then 0.6: the second draft counts only after the first: 1 + 0.8 + 0.8 * 0.6 = 2.28.
  CHECK(models::expected_accepted_tokens(mtp(2, {0.8, 0.6})) == Approx(2.28));
  // k = 3, one value for every position: 1 + 0.7 + 0.49 + 0.343 = 2.533.
  CHECK(models::expected_accepted_tokens(mtp(3, {0.7})) == Approx(2.533));
  CHECK(models::expected_accepted_tokens(mtp(3, {1.0})) == Approx(4.0));
  CHECK(models::expected_accepted_tokens(mtp(3, {0.0})) == Approx(1.0));
  CHECK(mtp(3, {0.7}).tokens_per_request() == 4);
}

TEST_CASE("models::SpecDecode: the first draft pass runs the target's tokens, the others one per request", "[quick]")
{
  const StepShape target{models::Phase::decode, 64, 32, 4096};
  const auto shapes = models::draft_pass_shapes(mtp(3, {0.7}), target);
  REQUIRE(shapes.size() == 3);
  CHECK(shapes[0].tokens == 64);
  CHECK(shapes[0].batch == 32);
  CHECK(shapes[1].tokens == 32);
  CHECK(shapes[1].batch == 32);
  CHECK(shapes[1].context_len == 4097);
  CHECK(shapes[2].context_len == 4098);
  CHECK(models::draft_pass_shapes(SpecDecodeSpec{}, target).empty());
}

TEST_CASE("config::ScenarioLoader: speculative_config keys, validated where they are written", "[quick]")
{
  TempDir dir;
  const Scenario s = load_scenario(dir.write("mtp.yaml", dsv3_ep8(64, kMtp1)));
  CHECK(s.speculative.method == SpecMethod::deepseek_mtp);
  CHECK(s.step.batch == 32); // 64 tokens = 32 decoding requests x (1 + 1)
  const Scenario list = load_scenario(
      dir.write("list.yaml", dsv3_ep8(96, "speculative_config: {method: deepseek_mtp, num_speculative_tokens: 2, "
                                          "acceptance_rate: [0.8, 0.6]}\n")));
  CHECK(list.step.batch == 32);
  CHECK(models::expected_accepted_tokens(list.speculative) == Approx(2.28));

  CHECK_THAT(error_of(dsv3_ep8(64, "speculative_config: {method: deepseek_mtp}\n")),
             Catch::Contains("method: deepseek_mtp needs acceptance_rate"));
  CHECK_THAT(error_of(dsv3_ep8(64, "speculative_config: {method: deepseek_mtp, acceptance_rate: 1.5}\n")),
             Catch::Contains("acceptance_rate: 1.5 is out of range (valid: 0..1)"));
  CHECK_THAT(error_of(dsv3_ep8(96, "speculative_config: {method: deepseek_mtp, num_speculative_tokens: 2, "
                                   "acceptance_rate: [0.8, 0.6, 0.4]}\n")),
             Catch::Contains("acceptance_rate: 3 values for 2 draft positions"));
  CHECK_THAT(error_of(dsv3_ep8(64, "speculative_config: {method: medusa, acceptance_rate: 0.8}\n")),
             Catch::Contains("valid: none, deepseek_mtp"));
  CHECK_THAT(error_of(dsv3_ep8(64, "speculative_config: {num_speculative_tokens: 2}\n")),
             Catch::Contains("num_speculative_tokens: has no effect without a speculative method"));
  CHECK_THAT(error_of(dsv3_ep8(63, kMtp1)),
             Catch::Contains("tokens_per_rank: 63 tokens do not split into decoding requests of 1 + 1"));
  // A serving run schedules its own steps: its single-step tokens_per_rank is not held to 1 + k.
  std::string serving_yaml = dsv3_ep8(1, kMtp1);
  serving_yaml.replace(serving_yaml.find("context_len: 4096}"), 18, "context_len: 4096, num_prompts: 10}");
  CHECK(load_scenario(dir.write("serving.yaml", serving_yaml)).requests.num_prompts == 10);
  const std::string located =
      error_of(dsv3_ep8(64, "speculative_config: {method: deepseek_mtp, acceptance_rate: 2}\n"));
  CHECK(located.rfind(":7:", 0) == 0); // file:line:col, at the value
}

TEST_CASE("sim::StepPlanBuilder: DBO's decode threshold counts the verification tokens", "[quick]")
{
  // vLLM compares the scheduled tokens with dbo_decode_token_threshold (32): 16 requests x (1 + 1) = 32 splits,
  // 16 requests x 1 does not.
  TempDir dir;
  const Scenario with_mtp = load_scenario(dir.write("mtp.yaml", dsv3_ep8(32, kMtp1)));
  const Scenario without  = load_scenario(dir.write("plain.yaml", dsv3_ep8(16, "")));
  REQUIRE(with_mtp.step.batch == 16);
  REQUIRE(without.step.batch == 16);
  CHECK(sim::build_step_plan(with_mtp, with_mtp.step, unit_costs()).num_ubatches() == 2);
  CHECK(sim::build_step_plan(without, without.step, unit_costs()).num_ubatches() == 1);
}

TEST_CASE("models::SpecDecode: the draft module costs one pass per draft token, each > 0", "[quick]")
{
  TempDir dir;
  const Scenario s = load_scenario(dir.write("mtp.yaml", dsv3_ep8(64, kMtp1)));
  const StepShape target{models::Phase::decode, 64, 32, 4096};
  const StepShape later{models::Phase::decode, 32, 32, 4097};
  const auto cost = [&](int k, const StepShape& t) {
    return models::draft_cost(s.model, s.hw, s.parallel, t, mtp(k, {0.8}), sim::comm_setup(s, 0), sim::draft_issue(s));
  };
  const models::DraftCost one = cost(1, target);
  REQUIRE(one.passes.size() == 1);
  CHECK(one.us > 0);
  CHECK(one.passes[0].head_us > 0);
  CHECK(one.passes[0].block.find(models::OpKind::D) != nullptr); // the MTP block is a MoE layer with its all-to-all
  // k = 2: the k = 1 pass over the target's tokens, plus one pass over one token per request.
  const models::DraftCost two = cost(2, target);
  REQUIRE(two.passes.size() == 2);
  CHECK(two.us == Approx(one.us + cost(1, later).us).epsilon(1e-12));
  CHECK(two.passes[1].us < two.passes[0].us); // half the tokens
  CHECK(cost(3, target).us == Approx(one.us + cost(1, later).us + cost(1, {models::Phase::decode, 32, 32, 4098}).us));
  // Off: nothing.
  CHECK(models::draft_cost(s.model, s.hw, s.parallel, target, SpecDecodeSpec{}, sim::comm_setup(s, 0),
                           sim::draft_issue(s))
            .passes.empty());
  // Under a graph a pass is one launch plus its kernels back to back; eager it cannot be faster than that.
  models::DraftIssue eager = sim::draft_issue(s);
  eager.cuda_graph         = false;
  CHECK(models::draft_cost(s.model, s.hw, s.parallel, target, mtp(1, {0.8}), sim::comm_setup(s, 0), eager).us >=
        one.us);
}

TEST_CASE("models::DraftMemo: the draft's time kept by its kernels' keys is draft_cost's, bit for bit", "[quick]")
{
  TempDir dir;
  const Scenario s = load_scenario(dir.write("mtp.yaml", dsv3_ep8(64, kMtp1)));
  // Decode shapes that share a key at other context lengths or requests, and mixed prefill steps (a prompt chunk beside
  // decoding requests, and one without decoding requests), graph and eager, k = 1 and 2, in an order where keys come
  // back.
  std::vector<StepShape> shapes{{models::Phase::decode, 64, 32, 4096},  {models::Phase::decode, 64, 32, 1000},
                                {models::Phase::decode, 64, 32, 333},   {models::Phase::decode, 32, 32, 2000},
                                {models::Phase::prefill, 520, 9, 2048}, {models::Phase::prefill, 512, 1, 700}};
  shapes[4].decode_tokens = shapes[4].decode_batch = 8;
  shapes[4].decode_context_len                     = 3000;
  StepShape again                                  = shapes[4];
  again.decode_context_len                         = 500;
  again.context_len                                = 1024;
  shapes.push_back(again);
  shapes.push_back(shapes[1]);
  // Equal tokens with other requests (the head's row kernels), and a mixed step of other MoE DP chunks.
  shapes.push_back({models::Phase::decode, 64, 16, 4096});
  StepShape longer = shapes[4];
  longer.tokens    = 1000;
  shapes.push_back(longer);
  longer.batch = 20;
  shapes.push_back(longer);
  for (const int k : {1, 2})
    for (const bool graph : {true, false}) {
      models::DraftIssue issue = sim::draft_issue(s);
      issue.cuda_graph         = graph;
      models::DraftMemo memo;
      for (const StepShape& t : shapes) {
        CAPTURE(k, graph, t.phase == models::Phase::decode, t.tokens, t.batch, t.context_len);
        const double whole =
            models::draft_cost(s.model, s.hw, s.parallel, t, mtp(k, {0.8}), sim::comm_setup(s, 0), issue).us;
        CHECK(memo.us(s.model, s.hw, s.parallel, t, mtp(k, {0.8}), sim::comm_setup(s, 0), issue) == whole);
      }
      CHECK(memo.size() < shapes.size() * static_cast<std::size_t>(k)); // keys shared
    }
  models::DraftMemo off;
  CHECK(off.us(s.model, s.hw, s.parallel, shapes[0], SpecDecodeSpec{}, sim::comm_setup(s, 0), sim::draft_issue(s)) ==
        0);
}

TEST_CASE("serving::SpecAcceptance: drawn acceptance converges to the closed form, deterministically", "[quick]")
{
  const SpecDecodeSpec spec = mtp(3, {0.8, 0.6, 0.5});
  long accepted = 0, n = 200000;
  for (int i = 0; i < n; ++i)
    accepted += serving::accepted_drafts(spec, 7, i % 1000, i / 1000, 3);
  // E[accepted drafts] = 0.8 + 0.48 + 0.24 = 1.52; its std is below 1.2, so 4 standard errors are < 0.011.
  CHECK(double(accepted) / double(n) == Approx(models::expected_accepted_tokens(spec) - 1).margin(0.011));
  CHECK(serving::accepted_drafts(spec, 7, 3, 5, 3) == serving::accepted_drafts(spec, 7, 3, 5, 3));
  CHECK(serving::accepted_drafts(mtp(2, {1.0}), 1, 0, 0, 2) == 2);
  CHECK(serving::accepted_drafts(mtp(2, {0.0}), 1, 0, 0, 2) == 0);
}

TEST_CASE("serving::ServingSim: with MTP a chunk carries the accepted tokens, TPOT = step / accepted tokens", "[quick]")
{
  using namespace dbosim::serving;
  test::ClosedFormOracle o;
  ServingParams p = test::small_params();
  StepCache cache;

  SECTION("every draft accepted: 2 tokens per step, ITL per chunk = the 2-token decode step")
  {
    p.speculative                 = mtp(1, {1.0});
    const ServingResult r         = run_serving(p, test::fixed_requests(1, 200, 21), 1, o, cache);
    const std::vector<double> itl = itl_gaps_s(r.live.at(0), r.clock);
    REQUIRE(itl.size() == 10); // 20 tokens after the first, 2 per step
    double sum_s = 0;
    for (std::size_t k = 0; k < itl.size(); ++k) {
      // KV after the step: the prompt, the first token, then 2 per step (the rejected draft never counts).
      const StepKey key{{models::Phase::decode, 2, 1, 200 + 2 * static_cast<int>(k) + 2}};
      CHECK(itl[k] * 1e6 == Approx(o.time_us(p.buckets.bucket(key)) + p.host_gap_us).epsilon(1e-9));
      sum_s += itl[k];
    }
    const auto m = serving_metrics(r, 1);
    CHECK(m["mean_tpot_ms"].get<double>() == Approx(sum_s * 1e3 / 20).epsilon(1e-9)); // step / 2 accepted
    for (const StepRecord& st : r.steps)
      if (st.exact.phase == models::Phase::decode)
        CHECK(st.exact.tokens == 2); // 1 + k verification tokens
  }
  SECTION("0.8 acceptance: 1.8 tokens per step on average, TPOT = mean ITL / tokens per chunk")
  {
    p.speculative                 = mtp(1, {0.8});
    p.seed                        = 3;
    const ServingResult r         = run_serving(p, test::fixed_requests(1, 200, 2001), 1, o, cache);
    const std::vector<double> itl = itl_gaps_s(r.live.at(0), r.clock);
    const double per_chunk        = 2000.0 / double(itl.size());
    CHECK(per_chunk == Approx(1.8).margin(0.05)); // ~1100 chunks, std 0.4 each: 4 standard errors
    double sum_s = 0;
    for (double s : itl)
      sum_s += s;
    const auto m = serving_metrics(r, 1);
    CHECK(m["mean_tpot_ms"].get<double>() == Approx(sum_s / double(itl.size()) * 1e3 / per_chunk).epsilon(1e-9));
  }
  SECTION("16 decoding requests verify 32 tokens per step (the DBO decode threshold's count)")
  {
    p.speculative         = mtp(1, {0.8});
    const ServingResult r = run_serving(p, test::fixed_requests(16, 100, 40), 16, o, cache);
    bool seen             = false;
    for (const StepRecord& st : r.steps)
      if (st.exact.phase == models::Phase::decode && st.exact.batch == 16) {
        CHECK(st.exact.tokens == 32);
        seen = true;
      }
    CHECK(seen);
  }
}

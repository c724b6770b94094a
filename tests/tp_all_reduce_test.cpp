/* Tensor parallelism inside a DP rank: the row-parallel layers' outputs are all-reduced over the TP group (o_proj in
 * every layer, the dense FFN's down projection, and the experts' sum when the MoE is TP-sharded at ep = 1), priced
 * as a ring over the node's links from the profile's link latency and the network facts' achievable bandwidth. */
#include "config/ModelLoader.hpp"
#include "config/NetworkFactsLoader.hpp"
#include "models/CommOps.hpp"
#include "models/OpCost.hpp"
#include "opcost_test_support.hpp"
#include "serving/KvCapacity.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

using namespace dbosim::models;

namespace {
const NetworkFacts& h200_net()
{
  static const NetworkFacts net = dbosim::load_network_facts("h200");
  return net;
}

CommSetup comm_with_links()
{
  CommSetup c;
  c.net           = &h200_net();
  c.gpus_per_node = 8;
  return c;
}

ParallelSpec tp(int size, int ep)
{
  ParallelSpec p;
  p.dp = 1, p.tp = size, p.ep = ep;
  p.backend = All2AllBackend::nccl;
  return p;
}

StepShape decode(int tokens)
{
  StepShape s;
  s.phase = Phase::decode, s.tokens = tokens, s.batch = tokens, s.context_len = 2048;
  return s;
}

/** The kernel names of an op, in launch order (parts carry names while cost explanations are on, the default). */
std::vector<std::string> names(const OpCost& op)
{
  std::vector<std::string> out;
  for (const OpKernelPart& p : op.parts)
    out.push_back(p.name);
  return out;
}

double part_us(const OpCost& op, const std::string& name)
{
  for (const OpKernelPart& p : op.parts)
    if (p.name == name)
      return p.us;
  FAIL("no kernel " << name);
  return 0;
}

/** NCCL's ring over tp GPUs of one node: 2 (tp - 1) hops and 2 (tp - 1) / tp of the buffer on the links. */
double ring_us(const HwProfile& hw, int tp_size, double tokens, int hidden)
{
  const double buffer = tokens * hidden * 2.0;
  return 2.0 * (tp_size - 1) * hw.nvlink_latency_us +
         2.0 * (tp_size - 1) / tp_size * buffer / h200_net().nvlink_achievable_bytes_per_s * 1e6;
}
} // namespace

TEST_CASE("models::layer_costs: tp > 1 all-reduces o_proj's output right after it, tp = 1 reduces nothing",
          "[quick][tp]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");

  const OpCost one                         = attention_a1_cost(v3, hw, tp(1, 1), decode(64), true, comm_with_links());
  const std::vector<std::string> one_names = names(one);
  CHECK(std::count(one_names.begin(), one_names.end(), "o_proj_all_reduce") == 0);

  const OpCost eight                = attention_a1_cost(v3, hw, tp(8, 8), decode(64), true, comm_with_links());
  const std::vector<std::string> nm = names(eight);
  const auto at                     = std::find(nm.begin(), nm.end(), "o_proj_all_reduce");
  REQUIRE(at != nm.end());
  REQUIRE(at != nm.begin());
  CHECK(*(at - 1) == "o_proj");
  CHECK(part_us(eight, "o_proj_all_reduce") == Approx(ring_us(hw, 8, 64, v3.hidden)).epsilon(1e-12));
  CHECK(eight.kernels == one.kernels + 1); // one launch more than the same layer without a TP group

  // The same attention kernels without the reduce: A1 is longer by exactly the all-reduce.
  double kernels_us = 0;
  for (const OpKernelPart& p : eight.parts)
    kernels_us += p.name == "o_proj_all_reduce" ? 0.0 : p.us;
  CHECK(eight.duration_us == Approx(kernels_us + part_us(eight, "o_proj_all_reduce")).epsilon(1e-12));
}

TEST_CASE("models::layer_costs: the TP all-reduce grows with the tokens it reduces and with the group", "[quick][tp]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  auto reduce_us     = [&](int tp_size, int tokens) {
    return part_us(attention_a1_cost(v3, hw, tp(tp_size, tp_size), decode(tokens), true, comm_with_links()),
                       "o_proj_all_reduce");
  };
  CHECK(reduce_us(8, 4096) > reduce_us(8, 64));
  CHECK(reduce_us(8, 64) > reduce_us(2, 64));
  // A large buffer is bandwidth-bound: 64x the tokens is nearly 64x the link time once the hops are taken off.
  const double hops_us = 2.0 * 7 * hw.nvlink_latency_us;
  CHECK((reduce_us(8, 65536) - hops_us) / (reduce_us(8, 1024) - hops_us) == Approx(64).epsilon(1e-9));
}

TEST_CASE("models::layer_costs: tp > 1 reduces the dense FFN's down projection, and a TP-sharded MoE's experts",
          "[quick][tp]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");

  const LayerCosts dense = layer_costs(v3, hw, tp(8, 1), decode(32), false, comm_with_links());
  const OpCost* mlp      = dense.find(OpKind::MLP);
  REQUIRE(mlp);
  REQUIRE(!names(*mlp).empty());
  CHECK(names(*mlp).back() == "dense_mlp_all_reduce");

  // ep = 1, tp = 8: every expert sliced over the group, one all-reduce of their sum at the end of the experts.
  const LayerCosts moe  = layer_costs(v3, hw, tp(8, 1), decode(32), true, comm_with_links());
  const OpCost* experts = moe.find(OpKind::MLP);
  REQUIRE(experts);
  CHECK(names(*experts).back() == "moe_all_reduce");
  CHECK(moe.find(OpKind::D) == nullptr);

  // ep = tp = 8: the experts are exchanged by the all-to-all backend; no extra reduce on the experts' op.
  const LayerCosts ep      = layer_costs(v3, hw, tp(8, 8), decode(32), true, comm_with_links());
  const OpCost* ep_experts = ep.find(OpKind::MLP);
  REQUIRE(ep_experts);
  const std::vector<std::string> ep_names = names(*ep_experts);
  CHECK(std::count(ep_names.begin(), ep_names.end(), "moe_all_reduce") == 0);
}

TEST_CASE("models::layer_costs: a TP group without link facts is an error naming tp", "[quick][tp]")
{
  const HwProfile hw = dbosim::test::h200_like();
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  CHECK_THROWS_WITH(attention_a1_cost(v3, hw, tp(8, 8), decode(8), true, CommSetup{}),
                    Catch::Contains("tp=8") && Catch::Contains("network facts"));
}

TEST_CASE("serving::weight_bytes_per_gpu: TP-sharded experts (ep = 1) hold a tp-th of every expert", "[quick][tp]")
{
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  ParallelSpec one   = tp(1, 1);
  ParallelSpec eight = tp(8, 1);
  ParallelSpec ep8   = tp(8, 8);
  // DeepSeek-V3's 256 routed experts are ~97% of its weights: at tp 8 a GPU holds about an eighth of the model,
  // as at ep 8 (whole experts, 32 a GPU), not the whole expert set.
  const double w1 = dbosim::serving::weight_bytes_per_gpu(v3, one);
  const double w8 = dbosim::serving::weight_bytes_per_gpu(v3, eight);
  CHECK(w8 < w1 / 7);
  CHECK(w8 == Approx(dbosim::serving::weight_bytes_per_gpu(v3, ep8)).epsilon(0.02));
}

TEST_CASE("models::duration_on_sms_us: the TP all-reduce inside A1 keeps its time on fewer SMs", "[quick][tp]")
{
  const HwProfile hw = dbosim::test::h200_like(); // no SM curves: the op's kernels scale by the SM fraction
  const ModelSpec v3 = dbosim::load_model_zoo("deepseek-v3");
  const OpCost a1    = attention_a1_cost(v3, hw, tp(8, 8), decode(64), true, comm_with_links());
  const double ar_us = part_us(a1, "o_proj_all_reduce");
  REQUIRE(ar_us > 0);
  CHECK(duration_on_sms_us(hw, a1, hw.sm_count / 2) == Approx((a1.duration_us - ar_us) * 2 + ar_us).epsilon(1e-12));
}

/* sglang_tbo: SGLang's two-batch overlap orders (sim/schedules/SglangTbo.cpp) — decode is DeepSeek's decode order,
 * prefill runs each stage of micro-batch 0 then the same stage of micro-batch 1. Schedules only, no simulation. */
#include "sim/plan/SyntheticPlan.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dbosim::sim;

namespace {

StepPlan plan(ScheduleId schedule, bool prefill)
{
  LayerDurations d;
  StepPlan p = synthetic_plan(schedule, 5, 1, 2, d);
  p.prefill  = prefill;
  return p;
}

/** "A0/1 A1/1 ..." : kind/micro-batch of every op on `s` in layer `layer`, in stream order. */
std::string stream_layer(const Schedule& sched, StreamId s, int layer)
{
  std::string out;
  for (OpVertex v : sched.stream_order[static_cast<int>(s)]) {
    const Op& op = sched.ops[v];
    if (op.layer != layer)
      continue;
    if (!out.empty())
      out += ' ';
    out += op_kind_name(op.kind);
    out += '/';
    out += std::to_string(op.ubatch);
  }
  return out;
}

} // namespace

TEST_CASE("schedule::sglang_tbo decode issues DeepSeek's decode order", "[quick]")
{
  const Schedule sg = build_schedule(plan(ScheduleId::sglang_tbo, false));
  const Schedule ds = build_schedule(plan(ScheduleId::deepseek_decode, false));
  CHECK(sg.name == "sglang_tbo");
  REQUIRE(sg.issue_order.size() == ds.issue_order.size());
  for (std::size_t i = 0; i < sg.issue_order.size(); ++i) {
    const Op& a = sg.ops[sg.issue_order[i]];
    const Op& b = ds.ops[ds.issue_order[i]];
    CHECK((a.kind == b.kind && a.layer == b.layer && a.ubatch == b.ubatch));
  }
}

TEST_CASE("schedule::sglang_tbo prefill runs each stage of micro-batch 0 then 1 (delta 0)", "[quick]")
{
  const Schedule s = build_schedule(plan(ScheduleId::sglang_tbo, true));
  // Layer 2 (a MoE layer): attention of both, experts of both, shared experts of both; D and C in the same order.
  CHECK(stream_layer(s, StreamId::compute, 2) == "A0/0 A1/0 A0/1 A1/1 MLP/0 MLP/1 S/0 S/1");
  CHECK(stream_layer(s, StreamId::comm, 2) == "D/0 D/1 C/0 C/1");
  // Unlike DeepSeek's prefill order, which starts micro-batch 1's attention first.
  const Schedule d = build_schedule(plan(ScheduleId::deepseek_prefill, true));
  CHECK(stream_layer(d, StreamId::compute, 2) != stream_layer(s, StreamId::compute, 2));
}

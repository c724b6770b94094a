#include "cli/CostReport.hpp"

#include "models/CostGuards.hpp"
#include "models/StepWork.hpp"
#include "sim/plan/StepPlanBuilder.hpp"

#include <fmt/format.h>

namespace dbosim::cli {
namespace {
using models::OpCost;

double layer_sum_us(const models::LayerCosts& l)
{
  double sum = 0;
  for (const auto& op : l.ops)
    sum += op.duration_us;
  return sum;
}

std::string format_layer(const char* title, int count, const models::LayerCosts& l)
{
  std::string out = fmt::format("{} (x{} layers)\n", title, count);
  out += fmt::format("  {:<4} {:>10} {:>11} {:>10} {:>8} {:>8}  {}\n", "op", "us", "GFLOP", "MB", "bound", "kernels",
                     "sm curve");
  for (const auto& op : l.ops)
    out += fmt::format("  {:<4} {:>10.2f} {:>11.3f} {:>10.3f} {:>8} {:>8}  {}\n", models::op_name(op.kind),
                       op.duration_us, op.flops / 1e9, op.bytes / 1e6, models::bound_name(op.bound), op.kernels,
                       op.sm_family.empty() ? "-" : op.sm_family);
  out += fmt::format("  {:<4} {:>10.2f}\n", "sum", layer_sum_us(l));
  return out;
}

nlohmann::ordered_json layer_json(const models::LayerCosts& l)
{
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto& op : l.ops)
    ops.push_back({{"op", models::op_name(op.kind)},
                   {"duration_us", op.duration_us},
                   {"flops", op.flops},
                   {"bytes", op.bytes},
                   {"bound", models::bound_name(op.bound)},
                   {"sm_family", op.sm_family},
                   {"kernels", op.kernels},
                   {"method", op.method}});
  return {{"sum_us", layer_sum_us(l)}, {"ops", ops}};
}
} // namespace

CostReport build_cost_report(const Scenario& s)
{
  CostReport r;
  r.shape                = s.step;
  const int moe_layers   = s.model.num_moe_layers();
  const int dense_layers = s.model.first_k_dense;
  if (moe_layers > 0)
    r.moe_layer = models::layer_costs(s.model, s.hw, s.parallel, r.shape, true, sim::comm_setup(s, 0));
  if (dense_layers > 0)
    r.dense_layer = models::layer_costs(s.model, s.hw, s.parallel, r.shape, false, sim::comm_setup(s, 0));
  models::check_layer_bounds(r.moe_layer, s.hw);
  models::check_layer_bounds(r.dense_layer, s.hw);
  r.step_work = models::step_work_cost(s.model, s.hw, s.parallel, r.shape);
  models::check_op_bounds(r.step_work, s.hw);
  r.step_serial_us =
      moe_layers * layer_sum_us(r.moe_layer) + dense_layers * layer_sum_us(r.dense_layer) + r.step_work.duration_us;
  return r;
}

std::string profile_line(const models::HwProfile& hw)
{
  return fmt::format("profile: {} {} {} ({})", hw.name, hw.provenance.kind, hw.provenance.date, hw.gpu);
}

std::string format_cost_report(const Scenario& s, const CostReport& r)
{
  std::string out = fmt::format("scenario: {}  model: {}  {}\n", s.name, s.model.name, profile_line(s.hw));
  out += fmt::format("step: {} {} tokens/rank, batch {}, context {}; dp {} ep {} tp {}; backend {}\n",
                     r.shape.phase == models::Phase::decode ? "decode" : "prefill", r.shape.tokens, r.shape.batch,
                     r.shape.context_len, s.parallel.dp, s.parallel.ep, s.parallel.tp,
                     models::backend_name(s.parallel.backend));
  if (!r.moe_layer.ops.empty())
    out += format_layer("MoE layer", s.model.num_moe_layers(), r.moe_layer);
  if (!r.dense_layer.ops.empty())
    out += format_layer("dense layer", s.model.first_k_dense, r.dense_layer);
  out += fmt::format("outside the layers (embedding, final norm, LM head, sampler): {:.2f} us, {} kernels\n",
                     r.step_work.duration_us, r.step_work.kernels);
  out += fmt::format("serial step (no overlap): {:.1f} us\n", r.step_serial_us);
  return out;
}

namespace {
std::string explain_cost(const std::string& title, const std::string& name, const OpCost& op)
{
  std::string out = fmt::format("{} {} = {:.3f} us ({}), {} kernel launches:\n", title, name, op.duration_us,
                                models::bound_name(op.bound), op.kernels);
  if (!op.parts.empty()) {
    out += fmt::format("  {:<28} {:<30} {:>10}  {}\n", "kernel", "table (floor family)", "us", "shape; launched at");
    for (const auto& k : op.parts) {
      const std::string timed = k.on_links ? "links" : k.timed_by.empty() ? "roofline" : k.timed_by;
      const std::string family =
          timed + " (" + (k.floor_family.empty() ? "-" : k.floor_family) + (k.floored ? ", at floor)" : ")");
      out += fmt::format("  {:<28} {:<30} {:>10.3f}  {}; {}\n", k.name, family, k.us, k.shape,
                         k.source.empty() ? "-" : k.source);
    }
  }
  // The method lists its terms separated by "; " — one per line reads better.
  std::string method = op.method;
  for (size_t pos; (pos = method.find("; ")) != std::string::npos;)
    method.replace(pos, 2, "\n    ");
  return out + "    " + method + "\n";
}
} // namespace

std::string explain_op(const CostReport& r, const std::string& name)
{
  if (name == "STEP")
    return explain_cost("outside the layers:", name, r.step_work);
  std::string out;
  for (const auto& [title, layer] : {std::pair{"MoE layer", &r.moe_layer}, std::pair{"dense layer", &r.dense_layer}})
    for (const auto& op : layer->ops)
      if (models::op_name(op.kind) == name)
        out += explain_cost(title, name, op);
  return out.empty()
             ? fmt::format("op {} does not occur in this model's layers (ops: A0 A1 D MLP S C, or STEP)\n", name)
             : out;
}

nlohmann::ordered_json cost_report_json(const Scenario& s, const CostReport& r)
{
  nlohmann::ordered_json j;
  j["profile"] = {
      {"name", s.hw.name}, {"kind", s.hw.provenance.kind}, {"date", s.hw.provenance.date}, {"gpu", s.hw.gpu}};
  j["shape"] = {{"phase", r.shape.phase == models::Phase::decode ? "decode" : "prefill"},
                {"tokens_per_rank", r.shape.tokens},
                {"batch", r.shape.batch},
                {"context_len", r.shape.context_len}};
  if (!r.moe_layer.ops.empty())
    j["moe_layer"] = layer_json(r.moe_layer);
  if (!r.dense_layer.ops.empty())
    j["dense_layer"] = layer_json(r.dense_layer);
  j["step_work_us"]   = r.step_work.duration_us;
  j["step_serial_us"] = r.step_serial_us;
  return j;
}

} // namespace dbosim::cli

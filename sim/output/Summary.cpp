#include "sim/output/Summary.hpp"

#include <fmt/format.h>

#include <cmath>

namespace dbosim::sim {

using json = nlohmann::ordered_json;

static double ns(double us) { return std::round(us * 1e3) / 1e3; }

json summary_json(const StepPlan& plan, const Metrics& m)
{
  json per_layer = json::array();
  for (double us : m.per_layer_us)
    per_layer.push_back(ns(us));
  json path = json::object();
  for (const auto& [k, us] : m.critical_path_us)
    path[k] = ns(us);
  json per_op = json::object();
  for (int k = 0; k < num_op_kinds; ++k) {
    const OpTotals& t = m.per_op[k];
    if (t.count > 0)
      per_op[op_kind_name(static_cast<OpKind>(k))] = {
          {"count", t.count}, {"total_us", ns(t.total_us)}, {"mean_us", ns(t.total_us / t.count)}};
  }
  json ubatch_tokens = json::array();
  for (const UbatchCosts& u : plan.ubatches)
    ubatch_tokens.push_back(u.tokens);
  return json{
      {"schedule", schedule_name(plan.schedule)},
      {"step_time_us", ns(m.step_time_us)},
      {"step_work_us", ns(m.step_work_us)},
      {"per_layer_us", per_layer},
      {"exposed_comm_us", ns(m.exposed_comm_us)},
      {"overlap_us", ns(m.overlap_us)},
      {"comm_us", ns(m.comm_us)},
      {"compute_us", ns(m.compute_us)},
      {"stream_busy_pct",
       {{"compute", ns(m.stream_busy_pct[0])}, {"comm", ns(m.stream_busy_pct[1])}, {"host", ns(m.host_busy_pct)}}},
      {"critical_path", path},
      {"per_op", per_op},
      {"plan",
       {{"num_layers", plan.num_layers},
        {"first_k_dense", plan.first_k_dense},
        {"num_ubatches", plan.num_ubatches()},
        {"ubatch_tokens", ubatch_tokens},
        {"cuda_graph", plan.host.cuda_graph},
        {"piecewise_graphs", plan.host.piecewise},
        {"host_sync_after_comm", plan.host.host_sync_after_comm},
        {"comm_sms", plan.gpu.comm_sms},
        {"comm_uses_sms", plan.gpu.comm_uses_sms},
        {"notes", plan.notes}}},
  };
}

std::string summary_text(const StepPlan& plan, const Metrics& m)
{
  std::string out;
  out += fmt::format("schedule {}  micro-batches {}  cuda graph {}  comm SMs {}\n", schedule_name(plan.schedule),
                     plan.num_ubatches(), plan.host.cuda_graph ? "full" : (plan.host.piecewise ? "piecewise" : "eager"),
                     plan.gpu.comm_sms);
  for (const std::string& n : plan.notes)
    out += fmt::format("  note: {}\n", n);
  out += fmt::format("step time        {:10.1f} us\n", m.step_time_us);
  if (!m.per_layer_us.empty()) {
    double lo = m.per_layer_us[0];
    double hi = lo;
    for (double us : m.per_layer_us) {
      lo = std::min(lo, us);
      hi = std::max(hi, us);
    }
    out += fmt::format("per layer        {:10.1f} us mean ({:.1f} .. {:.1f})\n",
                       (m.step_time_us - m.step_work_us) / static_cast<double>(m.per_layer_us.size()), lo, hi);
  }
  if (plan.step_work_kernels > 0)
    out += fmt::format("outside layers   {:10.1f} us  (embedding, final norm, LM head, sampler: {} kernels, after the "
                       "layers)\n",
                       m.step_work_us, plan.step_work_kernels);
  out += fmt::format("comm             {:10.1f} us  exposed {:.1f} us  overlapped {:.1f} us\n", m.comm_us,
                     m.exposed_comm_us, m.overlap_us);
  out += fmt::format("busy             compute {:.1f}%  comm {:.1f}%  host {:.1f}%\n", m.stream_busy_pct[0],
                     m.stream_busy_pct[1], m.host_busy_pct);
  out += "critical path   ";
  for (const auto& [k, us] : m.critical_path_us)
    out += fmt::format(" {} {:.1f}", k, us);
  out += "\nper op           count     total us    mean us\n";
  for (int k = 0; k < num_op_kinds; ++k) {
    const OpTotals& t = m.per_op[k];
    if (t.count > 0)
      out += fmt::format("  {:<12} {:7d} {:12.1f} {:10.2f}\n", op_kind_name(static_cast<OpKind>(k)), t.count,
                         t.total_us, t.total_us / t.count);
  }
  return out;
}

std::string compare_text(const std::vector<std::string>& labels, const std::vector<json>& summaries)
{
  std::string out = fmt::format("{:<18}", "");
  for (const std::string& l : labels)
    out += fmt::format(" {:>16}", l);
  out += "\n";
  auto row = [&](const char* name, auto get) {
    out += fmt::format("{:<18}", name);
    for (const json& s : summaries)
      out += fmt::format(" {:>16}", get(s));
    out += "\n";
  };
  row("schedule", [](const json& s) { return s.at("schedule").get<std::string>(); });
  row("micro-batches", [](const json& s) { return std::to_string(s.at("plan").at("num_ubatches").get<int>()); });
  row("step time us", [](const json& s) { return fmt::format("{:.1f}", s.at("step_time_us").get<double>()); });
  row("exposed comm us", [](const json& s) { return fmt::format("{:.1f}", s.at("exposed_comm_us").get<double>()); });
  row("overlap us", [](const json& s) { return fmt::format("{:.1f}", s.at("overlap_us").get<double>()); });
  row("compute busy %",
      [](const json& s) { return fmt::format("{:.1f}", s.at("stream_busy_pct").at("compute").get<double>()); });
  row("comm busy %",
      [](const json& s) { return fmt::format("{:.1f}", s.at("stream_busy_pct").at("comm").get<double>()); });
  if (!summaries.empty()) {
    const double base = summaries.front().at("step_time_us").get<double>();
    row("speedup", [&](const json& s) { return fmt::format("{:.3f}x", base / s.at("step_time_us").get<double>()); });
  }
  return out;
}

} // namespace dbosim::sim

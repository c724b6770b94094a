#include "plan/PlanReport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace dbosim::plan {
namespace {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

std::vector<std::string> metric_columns(const PlanSpec& spec)
{
  std::vector<std::string> cols{"gpus",
                                "ep",
                                "output_throughput",
                                "output_throughput_per_gpu",
                                "output_throughput_per_user",
                                "request_throughput",
                                "mean_ttft_ms",
                                "p99_ttft_ms",
                                "mean_itl_ms",
                                "p99_itl_ms",
                                "mean_tpot_ms"};
  for (const Slo& s : spec.slos)
    if (std::find(cols.begin(), cols.end(), s.metric) == cols.end())
      cols.push_back(s.metric);
  return cols;
}

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : ""; }
std::string pct(double v) { return fmt::format("{:+.1f}%", 100 * v); }
std::string hw_name(const std::string& hw) { return std::filesystem::path(hw).stem().string(); }

std::string html_escape(const std::string& s)
{
  std::string o;
  for (char c : s)
    o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

Table points_table(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an)
{
  Table t;
  t.header = {"point"};
  if (!rs.empty())
    t.header.insert(t.header.end(), rs.front().point.keys.begin(), rs.front().point.keys.end());
  // One hardware column: the swept key's when hardware is an axis, else the base's profile.
  const bool hw_swept = !rs.empty() && std::find(rs.front().point.keys.begin(), rs.front().point.keys.end(),
                                                 "hardware") != rs.front().point.keys.end();
  if (!hw_swept)
    t.header.push_back("hardware");
  t.header.push_back("status");
  const auto cols = metric_columns(spec);
  t.header.insert(t.header.end(), cols.begin(), cols.end());
  t.header.insert(t.header.end(), {"slo_ok", "replicas", "gpus_for_demand", "gpu_hours_per_mtok", "capacity_margin",
                                   "pareto", "dbo_gain", "async_gain"});
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const PointAnalysis& a = an.points[i];
    std::vector<std::string> row{fmt::format("{}", i)};
    for (std::size_t k = 0; k < rs[i].point.keys.size(); ++k) {
      const std::string& key = rs[i].point.keys[k];
      row.push_back(key == "hardware" || key == "model" ? hw_name(rs[i].point.values[k]) : rs[i].point.values[k]);
    }
    if (!hw_swept)
      row.push_back(hw_name(rs[i].hardware));
    row.push_back(rs[i].status);
    for (const std::string& c : cols)
      row.push_back(a.ok ? num(metric(rs[i], c)) : "");
    if (a.ok)
      row.insert(row.end(),
                 {a.slo_ok ? "true" : "false", fmt::format("{}", a.replicas), fmt::format("{}", a.gpus_for_demand),
                  num(a.gpu_hours_per_mtok), num(a.capacity_margin), a.pareto ? "true" : "false",
                  a.dbo_gain ? num(*a.dbo_gain) : "", a.async_gain ? num(*a.async_gain) : ""});
    else
      row.insert(row.end(), 8, "");
    t.rows.push_back(row);
  }
  return t;
}

Table per_hw_table(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an)
{
  Table t;
  t.header = {"hardware",       "point",     "configuration", "GPUs for demand", "replicas x GPUs",
              spec.demand_unit, "tok/s/GPU", "tok/s/user",    "GPU-h per M tok", "capacity margin"};
  for (const Slo& s : spec.slos)
    t.header.push_back(s.metric);
  for (const auto& [hw, i] : an.best_per_hw) {
    const PointAnalysis& a = an.points[i];
    std::vector<std::string> row{hw_name(hw),
                                 fmt::format("{}", i),
                                 rs[i].point.label(),
                                 fmt::format("{}", a.gpus_for_demand),
                                 fmt::format("{} x {}", a.replicas, a.gpus),
                                 fmt::format("{:.1f}", a.throughput),
                                 fmt::format("{:.1f}", metric(rs[i], "output_throughput_per_gpu")),
                                 fmt::format("{:.1f}", metric(rs[i], "output_throughput_per_user")),
                                 fmt::format("{:.2f}", a.gpu_hours_per_mtok),
                                 pct(a.capacity_margin)};
    for (std::size_t k = 0; k < spec.slos.size(); ++k)
      row.push_back(fmt::format("{:.1f} ({} margin)", metric(rs[i], spec.slos[k].metric), pct(a.slo_margin[k])));
    t.rows.push_back(row);
  }
  return t;
}

Table gains_table(const std::vector<PointResult>& rs, const PlanAnalysis& an)
{
  Table t;
  t.header = {
      "point", "hardware", "configuration", "tok/s/GPU", "DBO gain (vs DBO off)", "async-combine gain (vs off)"};
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const PointAnalysis& a = an.points[i];
    if (!a.dbo_gain && !a.async_gain)
      continue;
    t.rows.push_back({fmt::format("{}", i), hw_name(rs[i].hardware), rs[i].point.label(),
                      fmt::format("{:.1f}", metric(rs[i], "output_throughput_per_gpu")),
                      a.dbo_gain ? pct(*a.dbo_gain) : "", a.async_gain ? pct(*a.async_gain) : ""});
  }
  return t;
}

std::vector<std::string> recommendation_text(const PlanSpec& spec, const std::vector<PointResult>& rs,
                                             const PlanAnalysis& an, const ModelError& err)
{
  std::vector<std::string> out;
  std::string slos;
  for (const Slo& s : spec.slos)
    slos += fmt::format("{}{} <= {:g} ms", slos.empty() ? "" : ", ", s.metric, s.max_ms);
  out.push_back(fmt::format("Demand: {:g} {}. SLOs: {}. {} points evaluated, {} completed, {} meet the SLOs.",
                            spec.demand, spec.demand_unit, slos, rs.size(),
                            std::count_if(an.points.begin(), an.points.end(), [](auto& a) { return a.ok; }),
                            std::count_if(an.points.begin(), an.points.end(), [](auto& a) { return a.slo_ok; })));
  if (!an.recommended) {
    out.push_back("No point meets the SLOs: no recommendation. Widen the search space or relax the SLOs.");
    return out;
  }
  const std::size_t i    = *an.recommended;
  const PointAnalysis& a = an.points[i];
  out.push_back(fmt::format("Recommended: {} GPUs of {} ({} replicas of point {}: {}), delivering {:.1f} {} "
                            "against a demand of {:g} (capacity margin {}); {:.2f} GPU-hours per million output "
                            "tokens.",
                            a.gpus_for_demand, hw_name(rs[i].hardware), a.replicas, i, rs[i].point.label(),
                            a.replicas * a.throughput, spec.demand_unit, spec.demand, pct(a.capacity_margin),
                            a.gpu_hours_per_mtok));
  std::string margins;
  for (std::size_t k = 0; k < spec.slos.size(); ++k)
    margins += fmt::format("{}{} {:.1f} ms (limit {:g} ms, margin {})", k ? "; " : "", spec.slos[k].metric,
                           metric(rs[i], spec.slos[k].metric), spec.slos[k].max_ms, pct(a.slo_margin[k]));
  out.push_back("SLO margins: " + margins + ".");
  if (err.mape_pct) {
    const double m  = *err.mape_pct / 100.0;
    const auto reps = [&](double f) { return static_cast<int>(std::ceil(spec.demand / (a.throughput * f) - 1e-9)); };
    std::string names;
    for (std::size_t k = 0; k < err.cases.size(); ++k)
      names += (k ? ", " : ": ") + err.cases[k];
    out.push_back(fmt::format(
        "Uncertainty: the model's measured error against published deployments is {:.1f}% "
        "MAPE (validate group {}{}, {} cases{}; recorded in {}{}). Throughput band {:.1f} .. "
        "{:.1f} {} per replica, so {} .. {} GPUs.",
        *err.mape_pct, err.group, err.generation.empty() ? "" : ", its " + err.generation + " cases", err.cases.size(),
        names, err.source, err.note.empty() ? "" : "; " + err.note, a.throughput * (1 - m), a.throughput * (1 + m),
        spec.demand_unit, reps(1 + m) * a.gpus, m < 1 ? reps(1 - m) * a.gpus : 0));
  } else
    out.push_back(fmt::format("Uncertainty: model error not yet measured (no `{}` group in {}).", err.group,
                              err.source.empty() ? "a validate baseline" : err.source));
  return out;
}

std::string md_table(const Table& t)
{
  auto cell = [](std::string s) {
    for (std::size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2)
      s.replace(p, 1, "\\|");
    return s;
  };
  std::string s = "|";
  for (const auto& h : t.header)
    s += fmt::format(" {} |", cell(h));
  s += "\n|";
  for (std::size_t k = 0; k < t.header.size(); ++k)
    s += "---|";
  s += "\n";
  for (const auto& r : t.rows) {
    s += "|";
    for (const auto& c : r)
      s += fmt::format(" {} |", cell(c));
    s += "\n";
  }
  return s;
}

std::string html_table(const Table& t, const std::string& id)
{
  std::string s = fmt::format("<table id=\"{}\"><thead><tr>", id);
  for (const auto& h : t.header)
    s += "<th>" + html_escape(h) + "</th>";
  s += "</tr></thead><tbody>\n";
  for (const auto& r : t.rows) {
    s += "<tr>";
    for (const auto& c : r)
      s += "<td>" + html_escape(c) + "</td>";
    s += "</tr>\n";
  }
  return s + "</tbody></table>\n";
}

std::string csv_cell(const std::string& s)
{
  return s.find_first_of(",\"\n") == std::string::npos ? s : "\"" + s + "\"";
}

} // namespace

std::string points_csv(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an)
{
  const Table t = points_table(spec, rs, an);
  std::string s;
  for (std::size_t k = 0; k < t.header.size(); ++k)
    s += fmt::format("{}{}", k ? "," : "", csv_cell(t.header[k]));
  s += "\n";
  for (const auto& r : t.rows) {
    for (std::size_t k = 0; k < r.size(); ++k)
      s += fmt::format("{}{}", k ? "," : "", csv_cell(r[k]));
    s += "\n";
  }
  return s;
}

std::string report_markdown(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an,
                            const ModelError& err, const PointLaunch& launch)
{
  std::string s =
      fmt::format("# Capacity plan: {}\n\n## Recommendation\n\n", std::filesystem::path(spec.file).filename().string());
  for (const std::string& p : recommendation_text(spec, rs, an, err))
    s += p + "\n\n";
  if (!launch.text.empty())
    s += "## Launch the recommended point (" + launch.engine + ")\n\n```sh\n" + launch.text + "```\n\n";
  s += "## Fewest GPUs per hardware\n\n" + md_table(per_hw_table(spec, rs, an)) + "\n";
  s += "## Pareto frontier\n\n![frontier](plots/frontier.svg)\n\n";
  s += "## Latency vs EP\n\n![p99 ITL vs EP](plots/p99_itl_ms_vs_ep.svg)\n\n![p99 TTFT vs "
       "EP](plots/p99_ttft_ms_vs_ep.svg)"
       "\n\n";
  s += "## DBO and async-combine gains\n\nOutput tok/s per GPU of each point over its twin with the option off.\n\n" +
       md_table(gains_table(rs, an)) + "\n";
  s += "## One step of the recommended configuration\n\n![timeline](plots/timeline.svg)\n\n";
  s += "## All points\n\nSee points.csv.\n\n";
  if (!spec.dropped.empty())
    s += dropped_line(spec) + ".\n\n";
  s += md_table(points_table(spec, rs, an));
  return s;
}

std::string report_html(const PlanSpec& spec, const std::vector<PointResult>& rs, const PlanAnalysis& an,
                        const ModelError& err, const ReportPlots& plots, const PointLaunch& launch)
{
  const std::string title = "Capacity plan: " + std::filesystem::path(spec.file).filename().string();
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                  "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
                  "table{border-collapse:collapse;font-size:12px;margin:1em 0}td,th{border:1px solid #bbb;"
                  "padding:2px 6px;text-align:right}th{background:#eee}figure{margin:1em 0}"
                  ".rec{background:#eef6ee;border:1px solid #8b8;padding:0.5em 1em}"
                  ".scroll{overflow-x:auto}</style></head><body>\n";
  s += "<h1>" + html_escape(title) + "</h1>\n<h2>Recommendation</h2>\n<div class=\"rec\" id=\"recommendation\">\n";
  for (const std::string& p : recommendation_text(spec, rs, an, err))
    s += "<p>" + html_escape(p) + "</p>\n";
  s += "</div>\n";
  if (!launch.text.empty())
    s += "<h2>Launch the recommended point (" + html_escape(launch.engine) + ")</h2>\n<pre id=\"launch\">" +
         html_escape(launch.text) + "</pre>\n";
  s += "<h2>Fewest GPUs per hardware</h2>\n" + html_table(per_hw_table(spec, rs, an), "per-hardware");
  auto figure = [](const std::string& id, const std::string& svg, const std::string& caption) {
    return fmt::format("<figure class=\"plot\" id=\"{}\">{}<figcaption>{}</figcaption></figure>\n", id, svg,
                       html_escape(caption));
  };
  s += "<h2>Pareto frontier</h2>\n" +
       figure("plot-frontier", plots.frontier, "Output tok/s per GPU vs tok/s per user, per hardware.");
  s += "<h2>Latency vs EP</h2>\n" + figure("plot-itl", plots.itl_vs_ep, "p99 inter-token latency vs EP.") +
       figure("plot-ttft", plots.ttft_vs_ep, "p99 time to first token vs EP.");
  s += "<h2>DBO and async-combine gains</h2>\n<p>Output tok/s per GPU of each point over its twin with the option "
       "off.</p>\n" +
       html_table(gains_table(rs, an), "gains");
  s += "<h2>One step of the recommended configuration</h2>\n" +
       figure("plot-timeline", plots.timeline, plots.timeline_caption);
  s += "<h2>All points</h2>\n";
  if (!spec.dropped.empty())
    s += "<p id=\"dropped\">" + html_escape(dropped_line(spec)) + ".</p>\n";
  s += "<div class=\"scroll\">" + html_table(points_table(spec, rs, an), "points") + "</div>\n";
  return s + "</body></html>\n";
}

} // namespace dbosim::plan

#include "plan/PlanPlots.hpp"

#include "base/AtomicFile.hpp"
#include "base/InputError.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace dbosim::plan {
namespace {

const char* const terminal = "set terminal svg size 760,430 noenhanced font 'sans,11' background rgb 'white'\n";

std::string quote(const std::string& s)
{
  std::string q;
  for (char c : s)
    q += (c == '\'' ? std::string("''") : std::string(1, c));
  return "'" + q + "'";
}

std::string short_hw(const std::string& hw) { return std::filesystem::path(hw).stem().string(); }

} // namespace

std::string run_gnuplot(const std::string& dir, const std::string& name, const std::string& script)
{
  const std::string gp = dir + "/" + name + ".gp", svg = dir + "/" + name + ".svg";
  // gnuplot runs inside `dir` (its data files are named relative to it), so the output is named relative too.
  write_file_atomic(gp, fmt::format("{}set output {}\n{}", terminal, quote(name + ".svg"), script));
  const std::string cmd =
      fmt::format("cd {} && gnuplot {} > {} 2>&1", quote(dir), quote(name + ".gp"), quote(name + ".log"));
  if (std::system(cmd.c_str()) != 0)
    throw InternalError(
        fmt::format("gnuplot failed on {} (see {}/{}.log; scripts/setup.sh installs gnuplot-nox)", gp, dir, name));
  std::ifstream in(svg);
  std::stringstream text;
  text << in.rdbuf();
  std::string s    = text.str();
  const auto start = s.find("<svg");
  if (start == std::string::npos)
    throw InternalError(fmt::format("gnuplot wrote no SVG to {}", svg));
  return s.substr(start);
}

std::string frontier_plot(const std::string& dir, const std::vector<PointResult>& rs, const PlanAnalysis& an)
{
  std::map<std::string, std::string> all, slo, front;
  std::map<std::string, std::vector<std::pair<double, double>>> front_pts;
  std::string rec;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    if (!an.points[i].ok)
      continue;
    const double u = metric(rs[i], "output_throughput_per_user"), g = metric(rs[i], "output_throughput_per_gpu");
    const std::string row = fmt::format("{:.6g} {:.6g}\n", u, g);
    all[rs[i].hardware] += row;
    if (an.points[i].slo_ok)
      slo[rs[i].hardware] += row;
    if (an.points[i].pareto)
      front_pts[rs[i].hardware].push_back({u, g});
    if (an.recommended && *an.recommended == i)
      rec = row;
  }
  std::string script = "set xlabel 'output tok/s per user (1 / mean TPOT)'\nset ylabel 'output tok/s per GPU'\n"
                       "set grid\nset key outside right top\nset title 'Pareto frontier per hardware'\n";
  std::vector<std::string> series;
  int color = 1;
  for (const auto& [hw, rows] : all) {
    const std::string h = short_hw(hw);
    write_file_atomic(dir + "/frontier_" + h + "_all.dat", rows);
    series.push_back(
        fmt::format("'frontier_{}_all.dat' using 1:2 with points pt 6 ps 1.2 lc {} title '{} (all)'", h, color, h));
    if (slo.count(hw)) {
      write_file_atomic(dir + "/frontier_" + h + "_slo.dat", slo[hw]);
      series.push_back(fmt::format(
          "'frontier_{}_slo.dat' using 1:2 with points pt 7 ps 1.2 lc {} title '{} meets SLOs'", h, color, h));
    }
    auto pts = front_pts[hw];
    std::sort(pts.begin(), pts.end());
    std::string f;
    for (const auto& [u, g] : pts)
      f += fmt::format("{:.6g} {:.6g}\n", u, g);
    write_file_atomic(dir + "/frontier_" + h + "_pareto.dat", f);
    series.push_back(
        fmt::format("'frontier_{}_pareto.dat' using 1:2 with lines lw 2 lc {} title '{} frontier'", h, color, h));
    ++color;
  }
  if (!rec.empty()) {
    write_file_atomic(dir + "/frontier_recommended.dat", rec);
    series.push_back("'frontier_recommended.dat' using 1:2 with points pt 3 ps 3 lw 2 lc rgb 'black' "
                     "title 'recommended'");
  }
  if (series.empty())
    script += "set label 'no point completed' at graph 0.5, graph 0.5 center\nplot [0:1][0:1] NaN notitle\n";
  else {
    script += "plot ";
    for (std::size_t k = 0; k < series.size(); ++k)
      script += (k ? ", \\\n     " : "") + series[k];
    script += "\n";
  }
  return run_gnuplot(dir, "frontier", script);
}

std::string latency_vs_ep_plot(const std::string& dir, const std::string& metric_key, double slo_ms,
                               const std::vector<PointResult>& rs)
{
  std::map<std::string, std::string> series_rows; // "h200 DBO on, async off" -> rows
  std::set<int> eps;
  for (const PointResult& r : rs) {
    if (r.status != "ok")
      continue;
    const int ep = static_cast<int>(metric(r, "ep"));
    eps.insert(ep);
    const std::string name = fmt::format("{} DBO {} async {}", short_hw(r.hardware),
                                         r.point.value("overlap.enable_dbo") == "true" ? "on" : "off",
                                         r.point.value("overlap.async_combine") == "true" ? "on" : "off");
    series_rows[name] += fmt::format("{} {:.6g}\n", ep, metric(r, metric_key));
  }
  std::string script = fmt::format("set xlabel 'expert parallelism (EP = GPUs)'\nset ylabel '{}'\nset grid\n"
                                   "set logscale x 2\nset key outside right top\nset title '{} vs EP'\n",
                                   metric_key, metric_key);
  if (!eps.empty())
    script += fmt::format("set xrange [{}:{}]\n", *eps.begin() / 1.4, *eps.rbegin() * 1.4);
  std::vector<std::string> plots;
  int k = 0;
  for (const auto& [name, rows] : series_rows) {
    const std::string file = fmt::format("{}_{}.dat", metric_key, k);
    write_file_atomic(dir + "/" + file, rows);
    plots.push_back(fmt::format("'{}' using ($1*(1+0.04*({}-{:.1f}))):2 with points pt {} ps 1.1 title {}", file, k,
                                (series_rows.size() - 1) / 2.0, 5 + 2 * (k % 4), quote(name)));
    ++k;
  }
  if (slo_ms > 0)
    plots.push_back(fmt::format("{:.6g} with lines dt 2 lw 2 lc rgb 'red' title 'SLO {:g} ms'", slo_ms, slo_ms));
  if (plots.empty())
    script += "plot [1:2][0:1] NaN notitle\n";
  else {
    script += "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i)
      script += (i ? ", \\\n     " : "") + plots[i];
    script += "\n";
  }
  return run_gnuplot(dir, metric_key + "_vs_ep", script);
}

std::string timeline_plot(const std::string& dir, const nlohmann::json& trace, int layers, const std::string& title)
{
  // One rank's streams: a cluster trace holds several ranks (a process each); show the straggler's (its step is the
  // cluster's), else the lowest rank traced.
  auto is_stream_op = [](const nlohmann::json& e) {
    return e.value("ph", "") == "X" && e.contains("args") && e["args"].contains("layer") &&
           (e.value("tid", 0) == 1 || e.value("tid", 0) == 2);
  };
  std::set<int> pids;
  for (const auto& e : trace["traceEvents"])
    if (is_stream_op(e))
      pids.insert(e.value("pid", 0));
  int pid = pids.empty() ? 0 : *pids.begin();
  if (trace.contains("otherData") && trace["otherData"].contains("straggler_rank") &&
      pids.count(trace["otherData"]["straggler_rank"].get<int>()))
    pid = trace["otherData"]["straggler_rank"].get<int>();
  const std::string shown =
      pids.size() > 1 ? fmt::format("{} (rank {} of the {} traced)", title, pid, pids.size()) : title;
  auto is_op = [&](const nlohmann::json& e) { return is_stream_op(e) && e.value("pid", 0) == pid; };
  // The window: `layers` layers from the first one with communication (the first MoE layer; dense layers have none).
  int first  = 0;
  bool found = false;
  for (const auto& e : trace["traceEvents"])
    if (is_op(e) && (e.value("name", "") == "D" || e.value("name", "") == "C" || e.value("tid", 0) == 2)) {
      const int l = e["args"]["layer"].get<int>();
      first       = found ? std::min(first, l) : l;
      found       = true;
    }
  double t_begin = -1;
  for (const auto& e : trace["traceEvents"])
    if (is_op(e) && e["args"]["layer"].get<int>() >= first && e["args"]["layer"].get<int>() < first + layers)
      t_begin = t_begin < 0 ? e["ts"].get<double>() : std::min(t_begin, e["ts"].get<double>());
  std::map<int, std::string> rows_by_ubatch;
  double t_end = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (!is_op(e) || e["args"]["layer"].get<int>() < first || e["args"]["layer"].get<int>() >= first + layers)
      continue;
    const int ub    = e["args"].value("ubatch", 0);
    const double t0 = e["ts"].get<double>() - t_begin, dur = e["dur"].get<double>();
    const double y = e.value("tid", 0) == 1 ? 1.0 : 0.0;
    rows_by_ubatch[ub] += fmt::format("{:.3f} {:.3f} {:.1f} {}\n", t0, t0 + dur, y, e.value("name", "?"));
    t_end = std::max(t_end, t0 + dur);
  }
  std::string script =
      fmt::format("set title {}\nset xlabel 'time from the window start (us)'\nset ytics ('comm stream' 0, "
                  "'compute stream' 1)\nset yrange [-0.7:1.7]\nset xrange [0:{:.3f}]\n"
                  "set grid x\nset key outside right top\nset style fill solid 0.75 border lc rgb "
                  "'black'\n",
                  quote(shown), t_end * 1.02);
  std::vector<std::string> plots;
  for (const auto& [ub, rows] : rows_by_ubatch) {
    const std::string file = fmt::format("timeline_ub{}.dat", ub);
    write_file_atomic(dir + "/" + file, rows);
    plots.push_back(fmt::format("'{}' using (($1+$2)/2):3:(($2-$1)/2):(0.32) with boxxyerror lc {} title "
                                "'micro-batch {}'",
                                file, ub + 1, ub));
    plots.push_back(fmt::format("'{}' using (($1+$2)/2):3:(($2-$1) > {:.3f} ? stringcolumn(4) : '') with labels "
                                "font ',8' notitle",
                                file, t_end / 40));
  }
  if (plots.empty())
    script += "plot [0:1][0:1] NaN notitle\n";
  else {
    script += "plot ";
    for (std::size_t i = 0; i < plots.size(); ++i)
      script += (i ? ", \\\n     " : "") + plots[i];
    script += "\n";
  }
  return run_gnuplot(dir, "timeline", script);
}

} // namespace dbosim::plan

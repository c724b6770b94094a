#include "validate/TestbedCompare.hpp"

#include "base/AtomicFile.hpp"
#include "base/InputError.hpp"
#include "config/InputFile.hpp"
#include "sim/schedules/ScheduleRegistry.hpp"
#include "validate/ChildSim.hpp"
#include "validate/TestbedPlan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

namespace dbosim::validate {

namespace fs = std::filesystem;

static const char* const op_kinds[] = {"A0", "A1", "D", "MLP", "S", "C"};

namespace {

/** @brief Calls `f(shape, variant, schedule)` for every shipped testbed case (shape x variant) in the shapes' order:
 *  what the two writers below export, each in its own format. */
template <class F> void for_each_testbed_schedule(const TestbedShapes& shapes, const models::HwProfile& hw, F&& f)
{
  for (const TestbedShape& s : shapes.shapes)
    for (const TestbedVariant& v : testbed_variants())
      f(s, v, sim::build_schedule(testbed_step_plan(s, v, hw, shapes.gemm_family)));
}

} // namespace

std::vector<std::string> write_testbed_plans(const std::string& shapes_path, const models::HwProfile& hw,
                                             const std::string& dir)
{
  const TestbedShapes shapes = load_testbed_shapes(shapes_path);
  fs::create_directories(dir);
  std::vector<std::string> paths;
  for_each_testbed_schedule(shapes, hw,
                            [&](const TestbedShape& s, const TestbedVariant& v, const sim::Schedule& sched) {
                              const std::string path = (fs::path(dir) / (testbed_case_name(s, v) + ".txt")).string();
                              write_file_atomic(path, testbed_plan_text(s, v, sched, hw));
                              paths.push_back(path);
                            });
  return paths;
}

static std::string recording_csv(const std::string& path)
{
  std::vector<std::tuple<int, double, double, std::string>> rows; // rep, start, end, op
  try {
    const nlohmann::json doc = nlohmann::json::parse(read_input_file(path, max_trace_file_bytes));
    for (const auto& e : doc.at("traceEvents")) {
      if (e.value("ph", "") != "X")
        continue;
      const auto& a  = e.at("args");
      const double b = e.at("ts").get<double>();
      rows.emplace_back(
          a.at("rep").get<int>(), b, b + e.at("dur").get<double>(),
          testbed_op_name(a.at("kind").get<std::string>(), a.at("layer").get<int>(), a.at("ubatch").get<int>()));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, 0, 0, "traceEvents", e.what());
  }
  std::sort(rows.begin(), rows.end());
  std::string out = "op,start_us,end_us\n";
  for (const auto& [rep, b, e, op] : rows)
    out += fmt::format("{},{:.3f},{:.3f}\n", op, b, e);
  return out;
}

std::vector<std::string> write_testbed_ops(const std::string& testbed_dir, const models::HwProfile& hw,
                                           const std::string& dir)
{
  const TestbedShapes shapes = load_testbed_shapes((fs::path(testbed_dir) / "shapes.yaml").string());
  fs::create_directories(dir);
  std::vector<std::string> paths;
  for_each_testbed_schedule(
      shapes, hw, [&](const TestbedShape& s, const TestbedVariant& v, const sim::Schedule& sched) {
        const std::string name = testbed_case_name(s, v);
        const std::string header =
            fmt::format("# dbosim external testbed (validate/README.md, \"External testbeds\"): the shipped overlap "
                        "testbed's\n# {} written by `dbosim validate --write-testbed-ops`.\n# Ops in host issue order, "
                        "named L<layer>.u<ubatch>.<kind>.\n",
                        name);
        paths.push_back((fs::path(dir) / (name + ".yaml")).string());
        write_file_atomic(paths.back(), testbed_ops_yaml(testbed_ops_of(s, v, sched, hw), header));
        const fs::path rec = fs::path(testbed_dir) / (name + ".json");
        if (fs::exists(rec)) {
          paths.push_back((fs::path(dir) / (name + ".csv")).string());
          write_file_atomic(paths.back(), recording_csv(rec.string()));
        }
      });
  return paths;
}

namespace {

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Measured {
  double makespan_us = 0;
  std::map<std::string, double> kind_total_us;
  int reps = 0;
  int ops  = 0;
  std::string gpu;
};

Measured read_recording(const std::string& path)
{
  const std::string text = read_input_file(path, max_trace_file_bytes);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) { // parse_error, and out_of_range for numbers such as 1E1643
    throw InputError(path, 0, 0, "json", e.what());
  }
  if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw InputError(path, 0, 0, "traceEvents", "missing or not an array");
  std::map<int, std::pair<double, double>> span;       // rep -> (first start, last end)
  std::map<int, std::map<std::string, double>> totals; // rep -> kind -> µs
  std::map<int, int> ops;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X")
      continue;
    const auto& a  = e.at("args");
    const int rep  = a.at("rep").get<int>();
    const double b = e.at("ts").get<double>(), d = e.at("dur").get<double>();
    auto [it, fresh] = span.try_emplace(rep, b, b + d);
    if (!fresh)
      it->second = {std::min(it->second.first, b), std::max(it->second.second, b + d)};
    totals[rep][a.at("kind").get<std::string>()] += d;
    ++ops[rep];
  }
  if (span.empty())
    throw InputError(path, 0, 0, "traceEvents", "no recorded kernels");
  Measured m;
  std::vector<double> spans;
  for (const auto& [rep, s] : span)
    spans.push_back(s.second - s.first);
  m.makespan_us = median(spans);
  for (const char* k : op_kinds) {
    std::vector<double> t;
    for (auto& [rep, tot] : totals)
      t.push_back(tot[k]);
    m.kind_total_us[k] = median(t);
  }
  m.reps = static_cast<int>(span.size());
  m.ops  = ops.begin()->second;
  if (doc.contains("otherData"))
    m.gpu = doc["otherData"].value("gpu", "");
  return m;
}

} // namespace

std::vector<CaseResult> compare_testbed(const std::string& testbed_dir, const models::HwProfile& hw,
                                        double makespan_tolerance_pct, std::vector<std::string>& missing)
{
  const TestbedShapes shapes = load_testbed_shapes((fs::path(testbed_dir) / "shapes.yaml").string());
  std::vector<CaseResult> rows;
  for (const TestbedShape& s : shapes.shapes)
    for (const TestbedVariant& v : testbed_variants()) {
      const std::string name = testbed_case_name(s, v);
      const fs::path rec     = fs::path(testbed_dir) / (name + ".json");
      if (!fs::exists(rec)) {
        missing.push_back(rec.string());
        continue;
      }
      const Measured m         = read_recording(rec.string());
      const sim::StepPlan plan = testbed_step_plan(s, v, hw, shapes.gemm_family);
      const Prediction p       = simulate_in_child(plan);
      if (static_cast<int>(p.ops.size()) != m.ops)
        throw InputError(rec.string(), 0, 0, "traceEvents",
                         fmt::format("{} ops recorded per repeat, the schedule has {}", m.ops, p.ops.size()));
      const std::string src = fmt::format("overlap testbed on {} (kernels/overlap_testbed.cu), median of {} repeats",
                                          m.gpu.empty() ? "GPU" : m.gpu, m.reps);
      rows.push_back({"testbed_makespan/" + v.name, s.name, "makespan", "us", p.makespan_us, m.makespan_us,
                      makespan_tolerance_pct, src, "", ""});
      std::map<std::string, double> pred;
      for (const PredictedOp& o : p.ops)
        pred[o.kind] += o.end_us - o.start_us;
      for (const char* k : op_kinds)
        rows.push_back({"testbed_op/" + v.name, s.name, std::string(k) + " total", "us", pred[k], m.kind_total_us.at(k),
                        0, src, "", ""});
    }
  return rows;
}

} // namespace dbosim::validate

#include "cli/ValidateCommand.hpp"

#include "cli/BenchResultCommand.hpp"
#include "cli/Progress.hpp"

#include "base/AtomicFile.hpp"
#include "base/InputError.hpp"
#include "base/SelfExe.hpp"
#include "config/DataDir.hpp"
#include "config/HwProfileLoader.hpp"
#include "config/OutputDir.hpp"
#include "validate/CaseResult.hpp"
#include "validate/E2eCases.hpp"
#include "validate/ExternalTestbed.hpp"
#include "validate/RefCases.hpp"
#include "validate/TestbedCompare.hpp"
#include "validate/TraceImport.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <filesystem>
#include <optional>
#include <unistd.h>

namespace dbosim::cli {

namespace {

struct ValidateOptions {
  std::string cases_dir;
  std::string testbed_dir;
  std::string profile = "h200";
  std::string out_dir = "out/validate";
  std::string baseline;
  std::string write_baseline;
  std::string write_plans;
  std::string import_trace;
  std::string against;
  std::string write_ops;
  std::string testbed_ops;
  std::string recording;
  BenchResultOptions bench;
  double makespan_tolerance_pct = 10;
  double gate_slack_pct         = 2;
  bool no_cases                 = false;
  bool no_testbed               = false;
  bool no_e2e                   = false;
};

ValidateOptions& options()
{
  static ValidateOptions o;
  return o;
}

/** `--testbed-ops FILE --recording FILE`: an external testbed predicted and compared; exit 3 when the makespan
 *  exceeds --makespan-tolerance. */
int external_testbed(const ValidateOptions& o)
{
  const validate::TestbedOps t = validate::load_testbed_ops(o.testbed_ops);
  std::vector<std::string> names;
  for (const auto& op : t.ops)
    names.push_back(op.name);
  const validate::OpRecording rec           = validate::load_rank_recordings(o.recording, t.world_size, names);
  const models::HwProfile hw                = load_hw_profile(t.profile);
  const validate::ExternalPrediction p      = validate::predict_external(t, hw);
  const std::vector<validate::CaseResult> r = validate::compare_external(
      t, p, rec, o.makespan_tolerance_pct,
      fmt::format("{}, median of {} repeats{}", std::filesystem::path(o.recording).filename().string(), rec.reps,
                  rec.ranks > 1 ? fmt::format(" (slowest of {} ranks)", rec.ranks) : ""));
  prepare_out_dir(o.out_dir);
  fmt::print("{}", validate::format_results(r));
  if (rec.ignored_events > 0)
    fmt::print("{} recorded events named by no op were ignored\n", rec.ignored_events);
  const std::string csv = (std::filesystem::path(o.out_dir) / "validate.csv").string();
  write_file_atomic(csv, validate::results_csv(r));
  fmt::print("wrote {}\n", csv);
  return r.front().pass() ? 0 : 3;
}

/** The reference cases of the cases folder, and (unless --no-e2e) the end-to-end ones, each `dbosim run` as a user
 *  would run it. */
void add_case_rows(const ValidateOptions& o, const std::string& root, std::vector<validate::CaseResult>& rows)
{
  const std::string cases =
      o.cases_dir.empty() ? (std::filesystem::path(root) / "validate" / "cases").string() : o.cases_dir;
  for (auto& r : validate::run_reference_cases(cases))
    rows.push_back(std::move(r));
  if (!o.no_e2e) {
    validate::E2eOptions e2e;
    e2e.cases_dir = cases;
    e2e.dbosim    = self_exe("dbosim validate"); // each e2e case runs `dbosim run` as a user would
    e2e.work_dir  = (std::filesystem::path(o.out_dir) / "e2e").string();
    std::optional<Progress> bar; // on stderr when it is a terminal, as sweeps and serving runs show theirs
    e2e.on_progress = [&bar](std::size_t done, std::size_t total) {
      if (!bar)
        bar.emplace("validate e2e cases", total);
      bar->update(done);
    };
    for (auto& r : validate::run_e2e_cases(e2e))
      rows.push_back(std::move(r));
  }
}

/** The gate against the recorded baseline: 4 when a group's error grew past the slack, else 0. */
int baseline_gate(const ValidateOptions& o, const std::vector<validate::CaseResult>& rows)
{
  const validate::Baseline recorded = validate::load_baseline_file(o.baseline);
  std::vector<std::string> fresh;
  const auto gated = validate::summarize(validate::gated_rows(rows, recorded, fresh));
  if (!fresh.empty())
    fmt::print("gate: {} case(s) not in the baseline's case list, reported and not gated until it is re-recorded: {}\n",
               fresh.size(), fmt::join(fresh, ", "));
  const auto v = validate::gate_violations(gated, recorded.mape_pct, o.gate_slack_pct);
  for (const std::string& s : v)
    fmt::print("gate: {}\n", s);
  if (!v.empty()) {
    fmt::print("gate: FAILED ({} group(s))\n", v.size());
    return 4;
  }
  fmt::print("gate: ok (every group within {:.0f} points of {})\n", o.gate_slack_pct, o.baseline);
  return 0;
}

} // namespace

CLI::App* add_validate_command(CLI::App& app)
{
  ValidateOptions& o = options();
  CLI::App* v        = app.add_subcommand("validate", "Predicted vs measured: reference cases and the overlap testbed "
                                                             "(MAPE per group, CSV, regression gate)");
  v->add_option("--cases", o.cases_dir, "Folder of reference cases (default: validate/cases)");
  v->add_option("--testbed", o.testbed_dir, "Folder of testbed shapes and recordings (default: validate/testbed)");
  v->add_option("--profile", o.profile, "Hardware profile the testbed is predicted with")->capture_default_str();
  v->add_option("--out", o.out_dir, "Output folder (validate.csv)")->capture_default_str();
  v->add_option("--baseline", o.baseline, "Recorded MAPE per group: fail (exit 4) when a group rises > 2 points");
  v->add_option("--write-baseline", o.write_baseline, "Record this run's MAPE per group to FILE");
  v->add_option("--makespan-tolerance", o.makespan_tolerance_pct, "Testbed makespan tolerance (%)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100.0));
  v->add_flag("--no-cases", o.no_cases, "Skip the reference cases");
  v->add_flag("--no-testbed", o.no_testbed, "Skip the testbed");
  v->add_flag("--no-e2e", o.no_e2e,
              "Skip the e2e group (cases/e2e*.yaml: published deployments, each a `dbosim run` child; ~1 min)");
  v->add_option("--write-testbed-plans", o.write_plans,
                "Write the testbed's plan files (the schedules' op lists) to DIR for kernels/overlap_testbed.cu, then "
                "exit");
  v->add_option("--write-testbed-ops", o.write_ops,
                "Write the shipped testbed as external op lists (DIR/<case>.yaml) and its recordings as CSV "
                "(DIR/<case>.csv), then exit");
  CLI::Option* ops = v->add_option("--testbed-ops", o.testbed_ops,
                                   "An external testbed's op list (validate/README.md, \"External testbeds\"): "
                                   "predict it and compare with --recording, then exit");
  v->add_option("--recording", o.recording,
                "With --testbed-ops: the measured run (.json Chrome trace or .csv); for an op list of world_size > 1 "
                "each rank's file, the path holding {rank}")
      ->needs(ops);
  ops->needs("--recording");
  CLI::Option* bench = v->add_option("--bench-result", o.bench.bench_result,
                                     "A serving benchmark's result (vllm bench serve --save-result JSON, or "
                                     "sglang.bench_serving --output-file JSON lines): simulate --scenario with its run "
                                     "settings and print predicted vs measured, then exit (validate/README.md)");
  v->add_option("--scenario", o.bench.scenario, "With --bench-result: the serving scenario to predict it with")
      ->needs(bench);
  bench->needs("--scenario");
  v->add_option("--bench-format", o.bench.format,
                "With --bench-result: vllm or sglang (default: told from the file's fields)")
      ->needs(bench);
  v->add_option("--bench-line", o.bench.line,
                "With --bench-result: the line of the result to read in a JSON-lines file (default: the last)")
      ->needs(bench)
      ->check(CLI::Range(1, INT_MAX));
  v->add_option("--import-trace", o.import_trace,
                "Map a measured trace (Chrome JSON or profile-data CSV) to op kinds and print per-op totals, then "
                "exit");
  v->add_option("--against", o.against, "With --import-trace: a dbosim trace.json to compare with");
  return v;
}

int validate_command()
{
  const ValidateOptions& o = options();
  const std::string root   = data_dir();
  const std::string testbed =
      o.testbed_dir.empty() ? (std::filesystem::path(root) / "validate" / "testbed").string() : o.testbed_dir;
  if (!o.import_trace.empty()) {
    fmt::print("{}", validate::compare_traces(o.import_trace, o.against));
    return 0;
  }
  if (!o.write_ops.empty()) {
    prepare_out_dir(o.write_ops, "--write-testbed-ops");
    const models::HwProfile hw = load_hw_profile(o.profile);
    const auto paths           = validate::write_testbed_ops(testbed, hw, o.write_ops);
    fmt::print("wrote {} files to {}\n", paths.size(), o.write_ops);
    return 0;
  }
  if (!o.testbed_ops.empty())
    return external_testbed(o);
  if (!o.bench.bench_result.empty()) {
    BenchResultOptions b = o.bench;
    b.out_dir            = o.out_dir;
    return bench_result_command(b);
  }
  if (!o.write_plans.empty()) {
    prepare_out_dir(o.write_plans, "--write-testbed-plans");
    const models::HwProfile hw = load_hw_profile(o.profile);
    const auto paths =
        validate::write_testbed_plans((std::filesystem::path(testbed) / "shapes.yaml").string(), hw, o.write_plans);
    fmt::print("wrote {} plan files to {}\n", paths.size(), o.write_plans);
    return 0;
  }
  prepare_out_dir(o.out_dir);
  std::vector<validate::CaseResult> rows;
  std::vector<std::string> missing;
  if (!o.no_testbed) {
    const models::HwProfile hw = load_hw_profile(o.profile);
    rows                       = validate::compare_testbed(testbed, hw, o.makespan_tolerance_pct, missing);
  }
  if (!o.no_cases)
    add_case_rows(o, root, rows);
  fmt::print("{}", validate::format_results(rows));
  for (const std::string& m : missing)
    fmt::print("no recording: {} (run kernels/overlap_testbed.cu, see validate/README)\n", m);
  const std::string csv = (std::filesystem::path(o.out_dir) / "validate.csv").string();
  write_file_atomic(csv, validate::results_csv(rows));
  fmt::print("wrote {}\n", csv);
  const auto groups = validate::summarize(rows);
  if (!o.write_baseline.empty()) {
    write_file_atomic(o.write_baseline, validate::baseline_yaml(groups, rows));
    fmt::print("wrote {}\n", o.write_baseline);
  }
  if (!o.baseline.empty())
    if (const int rc = baseline_gate(o, rows); rc != 0)
      return rc;
  int failed = 0;
  for (const auto& [name, g] : groups)
    failed += g.failed;
  if (failed > 0) {
    fmt::print("{} case(s) exceed their tolerance\n", failed);
    return 3;
  }
  return 0;
}

} // namespace dbosim::cli

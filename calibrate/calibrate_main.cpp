/* dbosim-calibrate — fits a measured hardware profile from raw calibration results and prints its accuracy card.
 *   dbosim-calibrate fit OUT --out NEW.yaml [--reference h200] [--force]   (the records of calibrate/run_on_gpu.sh OUT)
 *   dbosim-calibrate fit --raw R.jsonl --base B.yaml --out P.yaml [--verify V.jsonl] [--force]
 *   dbosim-calibrate report --raw R.jsonl [--verify V.jsonl]
 *   dbosim-calibrate refit hwprofiles/h200.yaml [--out P.yaml]   (replays the fit recorded in the profile)
 *   dbosim-calibrate derive --parent hwprofiles/h200.yaml --facts hwprofiles/facts/h800.yaml --out hwprofiles/h800.yaml
 *   dbosim-calibrate diff A.yaml B.yaml [--json F] [--max-step-ratio X]   (family ratios B/A, step times under each)
 * The measurements themselves come from dbosim-calibrate-run (kernels/, needs a GPU). */
#include "base/AtomicFile.hpp"
#include "base/InputError.hpp"
#include "calibrate/DiffCommand.hpp"
#include "calibrate/LeaveOneOut.hpp"
#include "calibrate/ProfileDerive.hpp"
#include "calibrate/ProfileFit.hpp"
#include "calibrate/ProfileWriter.hpp"
#include "calibrate/ResultsStore.hpp"
#include "calibrate/SmScalingLoo.hpp"
#include "calibrate/SmTableLoo.hpp"
#include "calibrate/StageCheck.hpp"
#include "calibrate/VerifyCheck.hpp"
#include "cli/UsageExit.hpp"
#include "config/DataDir.hpp"
#include "config/HwProfileLoader.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace {
using namespace dbosim::calib;

void print_report(const FittedProfile& fit, const std::vector<Measurement>& records, const std::string& verify)
{
  long ok = 0, skipped = 0, errors = 0;
  for (const auto& m : records) {
    if (m.spec.family == "env")
      continue;
    ok += m.ok();
    skipped += m.status.rfind("skipped", 0) == 0;
    errors += m.status.rfind("error", 0) == 0;
  }
  fmt::print("calibration of {} ({} SMs, driver {}, CUDA {}, cuBLAS {}, NCCL {}) on {}, commit {}\n",
             fit.env.at("gpu_name"), fit.env.at("sm_count"), fit.env.at("driver"), fit.env.at("cuda"),
             fit.env.at("cublas"), fit.env.at("nccl"), fit.env.at("date"), fit.env.at("git_commit"));
  fmt::print("records: {} ok, {} skipped, {} errors; {} tables\n", ok, skipped, errors, fit.tables.size());
  // points timed while the SM clock was well under its maximum (power or thermal limit): slower than at full clock
  const double max_mhz = fit.env.count("max_sm_clock_mhz") ? std::stod(fit.env.at("max_sm_clock_mhz")) : 0;
  long slow_clock = 0, with_clock = 0;
  for (const auto& m : records)
    if (m.ok() && m.extra.count("sm_clock_mhz") && m.extra.at("sm_clock_mhz") > 0) {
      ++with_clock;
      slow_clock += m.extra.at("sm_clock_mhz") < 0.9 * max_mhz;
    }
  fmt::print("SM clock: {} of {} points read under 90% of the {:g} MHz maximum (min {}, median {} MHz)\n\n", slow_clock,
             with_clock, max_mhz, fit.clocks.count("sm_clock_mhz_min") ? fit.clocks.at("sm_clock_mhz_min") : "?",
             fit.clocks.count("sm_clock_mhz_median") ? fit.clocks.at("sm_clock_mhz_median") : "?");
  fmt::print("leave-one-out interpolation error on tokens (each interior point predicted from the others):\n{}\n",
             format_loo_report(fit.tables));
  fmt::print("SM scaling (relative speed):\n");
  for (const auto& [fam, c] : fit.sm_scaling) {
    std::string row;
    for (size_t i = 0; i < c.x.size(); ++i)
      row += fmt::format(" {:g}:{:.3f}", c.x[i], c.y[i]);
    fmt::print("  {:<13}{}\n", fam, row);
  }
  const int sm_count = std::stoi(fit.env.at("sm_count"));
  const SmRates rates{fit.best_bf16_tflops.value * 1e12, fit.best_fp8_tflops.value * 1e12,
                      fit.best_stream_gbps.value * 1e9};
  fmt::print("SM scaling, leave one kernel out (fit on the family's other kernels, predict the left-out kernel's "
             "speed at each measured SM count):\n{}",
             format_sm_loo_report(sm_scaling_loo(sm_scaling_kernels(records, sm_count), sm_count, rates)));
  if (!fit.sm_tables.empty())
    fmt::print("SM scaling, per-shape tables, leave one token count out ({} tables; each point predicted from its "
               "table's other points, linear between neighbours, clamped at the ends; vs the gemm median curve):\n{}",
               fit.sm_tables.size(), format_sm_table_loo_report(sm_table_loo(fit.sm_tables, fit.sm_scaling)));
  fmt::print("interference (slowdown factors):\n");
  for (const auto& [k, s] : fit.interference)
    fmt::print("  {:<32} {:.3f}\n", k, s.value);
  fmt::print("host costs (us):\n");
  for (const auto& [k, s] : fit.host_us)
    fmt::print("  {:<32} {:.2f}\n", k, s.value);
  if (!verify.empty()) {
    auto rows = compare_verification(records, ResultsStore::read_file(verify));
    fmt::print("\nfresh verification pass ({}):\n", verify);
    for (const auto& r : rows)
      fmt::print("  {:<45} run {:>9.1f} us   fresh {:>9.1f} us   {:+.1f}%\n", r.key, r.fitted_us, r.fresh_us,
                 100 * r.rel_diff);
  }
}

/** A path recorded relative to the repository (provenance.fit_base) read from anywhere: the source tree's copy. */
std::string repo_path(const std::string& recorded)
{
  if (std::filesystem::path(recorded).is_absolute() || std::filesystem::exists(recorded))
    return recorded;
  return (std::filesystem::path(DBOSIM_SOURCE_DIR) / recorded).string();
}

/** Every option of every verb (CLI11 writes them as it parses). */
struct CalibrateArgs {
  std::string raw, base, out, verify, raw_label, base_label, job_dir, base_recorded, reference = "h200";
  std::vector<std::string> skip;
  bool force = false;
  std::string profile;
  DeriveOptions derive;
  DiffOptions diff;
  std::string diff_json;
  bool no_steps = false;
};

/** The verbs' subcommands. */
struct CalibrateVerbs {
  CLI::App* fit    = nullptr;
  CLI::App* report = nullptr;
  CLI::App* refit  = nullptr;
  CLI::App* derive = nullptr;
  CLI::App* diff   = nullptr;
};

CLI::App* add_fit_command(CLI::App& app, CalibrateArgs& a)
{
  auto* fit_cmd = app.add_subcommand("fit", "fit the profile and write it");
  auto* job_opt = fit_cmd->add_option("OUT", a.job_dir,
                                      "the folder of a calibration job (calibrate/run_on_gpu.sh OUT): its raw.jsonl "
                                      "and verify.jsonl, checked against --reference stage by stage");
  job_opt->check(CLI::ExistingDirectory);
  auto* raw_opt = fit_cmd->add_option("--raw", a.raw, "raw results (JSON lines from dbosim-calibrate-run)");
  raw_opt->check(CLI::ExistingFile)->excludes(job_opt);
  fit_cmd
      ->add_option("--base", a.base,
                   "the datasheet profile it refines (with OUT: the base the reference was fitted on)")
      ->check(CLI::ExistingFile);
  fit_cmd->add_option("--out", a.out, "profile to write (atomically); an existing file only with --force")->required();
  fit_cmd->add_flag("--force", a.force, "overwrite --out when it exists");
  fit_cmd
      ->add_option("--reference", a.reference,
                   "with OUT: the profile the new one is to reproduce (a name in hwprofiles/ or a path): the fit stops "
                   "when the records lack a part of it, and prints the gate against it")
      ->needs(job_opt);
  fit_cmd->add_option("--raw-label", a.raw_label, "raw-results path recorded in provenance (default: --raw)");
  fit_cmd->add_option("--base-label", a.base_label, "how the profile's header names the base (default: --base)");
  fit_cmd->add_option("--verify", a.verify, "a fresh verification pass to record in provenance")
      ->check(CLI::ExistingFile);
  fit_cmd->add_option("--skip-family", a.skip, "leave this table family out of the profile (repeatable)");
  return fit_cmd;
}

CLI::App* add_diff_command(CLI::App& app, CalibrateArgs& a)
{
  auto* diff_cmd = app.add_subcommand("diff", "compare two profiles family by family (ratios B/A) and the step time "
                                              "of the shipped single-step scenarios under each");
  diff_cmd->add_option("A", a.diff.profile_a, "the reference profile (a name in hwprofiles/ or a path)")->required();
  diff_cmd->add_option("B", a.diff.profile_b, "the profile compared to it")->required();
  diff_cmd->add_option("--json", a.diff_json, "also write the comparison as JSON to this file");
  auto* gate = diff_cmd->add_option("--max-step-ratio", a.diff.max_step_ratio,
                                    "exit 1 when a scenario's step under B differs from A's by more than this factor "
                                    "(B/A or A/B), or runs under one profile only");
  gate->check(CLI::Validator(
      [](std::string& v) {
        char* end       = nullptr;
        const double x  = std::strtod(v.c_str(), &end);
        const bool good = end != v.c_str() && *end == '\0' && std::isfinite(x) && x >= 1;
        return good ? std::string() : "'" + v + "' is not a factor >= 1 (a step may differ by B/A or A/B up to it)";
      },
      "FACTOR>=1"));
  diff_cmd->add_option("--scenario", a.diff.scenarios,
                       "a scenario to time (name or path, repeatable; default: every shipped scenario)");
  diff_cmd->add_flag("--no-steps", a.no_steps, "compare the profiles only, run no scenario")->excludes(gate);
  return diff_cmd;
}

CalibrateVerbs add_verbs(CLI::App& app, CalibrateArgs& a)
{
  CalibrateVerbs v;
  v.fit    = add_fit_command(app, a);
  v.report = app.add_subcommand("report", "print the accuracy card (leave-one-out errors per family)");
  v.report->add_option("--raw", a.raw, "raw results")->required()->check(CLI::ExistingFile);
  v.report->add_option("--verify", a.verify, "a fresh verification pass to compare")->check(CLI::ExistingFile);
  v.refit = app.add_subcommand("refit", "fit again from the raw results and options a profile records");
  v.refit->add_option("profile", a.profile, "a measured profile written by fit")->required()->check(CLI::ExistingFile);
  v.refit->add_option("--out", a.out, "profile to write (default: the profile itself)");
  v.derive = app.add_subcommand("derive", "write a derived profile: a measured parent's compute behaviour "
                                          "with another GPU's memory and links (hwprofiles/README.md)");
  v.derive->add_option("--parent", a.derive.parent_profile, "the measured parent profile")
      ->required()
      ->check(CLI::ExistingFile);
  v.derive->add_option("--facts", a.derive.facts, "the child's datasheet facts (hwprofiles/facts/<name>.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  v.derive->add_option("--out", a.out, "profile to write (atomically)")->required();
  v.diff = add_diff_command(app, a);
  return v;
}

/** fit: its inputs, from a calibration job's folder (its raw and verify records, the base the reference was fitted
 *  on) or from --raw and --base; the reference profile's file for a job, else "". */
std::string resolve_fit_inputs(CalibrateArgs& a)
{
  std::string reference_file;
  if (a.job_dir.empty() && a.raw.empty())
    throw dbosim::InputError("fit", "give a calibration job's folder (OUT), or --raw R.jsonl --base B.yaml");
  if (!a.force && std::filesystem::exists(a.out))
    throw dbosim::InputError(a.out, "--out exists (a shipped profile?); write a new file, or pass --force");
  if (!a.job_dir.empty()) { // the records of calibrate/run_on_gpu.sh OUT, the base the reference was fitted on
    a.raw = (std::filesystem::path(a.job_dir) / "raw.jsonl").string();
    if (!std::filesystem::exists(a.raw))
      throw dbosim::InputError(a.job_dir, "no raw.jsonl (run calibrate/run_on_gpu.sh " + a.job_dir + " first)");
    const std::string v = (std::filesystem::path(a.job_dir) / "verify.jsonl").string();
    if (a.verify.empty() && std::filesystem::exists(v))
      a.verify = v;
    reference_file = dbosim::resolve_data_file("hwprofiles", a.reference);
    if (a.base.empty()) {
      RecordedFit recorded;
      try {
        recorded = recorded_fit(reference_file);
      } catch (const std::runtime_error& e) { // a datasheet or derived reference: no fit to take the base from
        throw dbosim::InputError(reference_file, fmt::format("{}; pass --base", e.what()));
      }
      a.base          = repo_path(recorded.base);
      a.base_recorded = recorded.base; // as the reference records it, relative to the repository
      if (a.base_label.empty())
        a.base_label = recorded.base_label;
    }
  } else if (a.base.empty()) {
    throw dbosim::InputError("fit --raw", "--base (the datasheet profile it refines) is required");
  }
  return reference_file;
}

/** The job's records against the profile they are to reproduce: the same GPU, every stage measured. */
void check_against_reference(const FittedProfile& fit, const CalibrateArgs& a, const std::string& reference_file)
{
  const auto ref        = dbosim::load_hw_profile(reference_file);
  const std::string gpu = fit.env.count("gpu_name") ? fit.env.at("gpu_name") : "?";
  if (ref.provenance.details.count("gpu_name") && ref.provenance.details.at("gpu_name") != gpu)
    throw dbosim::InputError(a.raw, fmt::format("measured on {}, the reference {} on {}; pass --reference for this GPU",
                                                gpu, reference_file, ref.provenance.details.at("gpu_name")));
  const auto missing = check_stages(fit, ref, !a.verify.empty());
  if (!missing.empty())
    throw dbosim::InputError(a.job_dir, missing_stages_text(missing, reference_file, a.job_dir));
}

/** Writes the fitted profile with its provenance and says what to run next. */
void write_fit(const FittedProfile& fit, const std::vector<Measurement>& records, const CalibrateArgs& a,
               const std::string& reference_file)
{
  WriterOptions opt;
  opt.base_profile  = a.base;
  opt.base_recorded = a.base_recorded;
  opt.verify_path   = a.verify;
  opt.base_label    = a.base_label;
  opt.skip_families = a.skip;
  opt.raw_results   = a.raw_label.empty() ? a.raw : a.raw_label;
  if (!a.verify.empty())
    opt.verify_note = "fresh pass in a separate process right after the run: " +
                      verification_note(compare_verification(records, ResultsStore::read_file(a.verify)));
  write_profile(fit, opt, a.out);
  fmt::print("wrote {} ({} tables, {} SM-scaling curves, {} interference factors)\n", a.out, fit.tables.size(),
             fit.sm_scaling.size(), fit.interference.size());
  if (!reference_file.empty())
    fmt::print("next, the gate (the same GPU within {:g}x on every shipped step; calibrate/README.md says what to do "
               "when it fails):\n  dbosim-calibrate diff {} {} --max-step-ratio {:g}\n",
               kSameGpuStepRatio, reference_file, a.out, kSameGpuStepRatio);
}

/** Runs the verb the command line named. */
int run_verb(const CalibrateVerbs& v, CalibrateArgs& a)
{
  if (*v.diff) {
    a.diff.steps            = !a.no_steps;
    const DiffReport report = profile_diff(a.diff);
    fmt::print("{}", report.text);
    if (!a.diff_json.empty())
      dbosim::write_file_atomic(a.diff_json, report.json.dump(2) + "\n");
    return report.exit_code;
  }
  if (*v.derive) {
    write_derived_profile(a.derive, a.out);
    fmt::print("wrote {} (derived from {} with {})\n", a.out, a.derive.parent_profile, a.derive.facts);
    return 0;
  }
  if (*v.refit) { // the fit recorded in the profile, from the same raw records and options
    RefitInputs in           = refit_inputs(a.profile, DBOSIM_SOURCE_DIR);
    const std::string target = a.out.empty() ? a.profile : a.out;
    write_profile(fit_profile(in.records), in.options, target);
    fmt::print("wrote {} (refit of {} from {})\n", target, a.profile, in.options.raw_results);
    return 0;
  }
  std::string reference_file;
  if (*v.fit)
    reference_file = resolve_fit_inputs(a);
  int dropped  = 0;
  auto records = ResultsStore::read_file(a.raw, &dropped);
  if (dropped)
    fmt::print(stderr, "{}: ignored a torn last line (an interrupted run)\n", a.raw);
  FittedProfile fit = fit_profile(records);
  if (*v.report) {
    print_report(fit, records, a.verify);
    return 0;
  }
  if (!reference_file.empty())
    check_against_reference(fit, a, reference_file);
  write_fit(fit, records, a, reference_file);
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  CLI::App app{"dbosim-calibrate: fit a measured hardware profile from raw calibration results"};
  app.require_subcommand(1);
  CalibrateArgs a;
  const CalibrateVerbs verbs = add_verbs(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return dbosim::cli::usage_exit(app, e, "dbosim-calibrate"); // a usage error is bad input: exit 2, as dbosim's
  }
  try {
    return run_verb(verbs, a);
  } catch (const dbosim::InputError& e) { // a bad input file: exit 2, as dbosim does
    fmt::print(stderr, "dbosim-calibrate: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dbosim-calibrate: {}\n", e.what());
    return 1;
  }
}

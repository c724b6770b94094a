#include "cli/BenchResultCommand.hpp"

#include "base/AtomicFile.hpp"
#include "cli/ServingCommand.hpp"
#include "config/OutputDir.hpp"
#include "serving/ServingMetrics.hpp"
#include "validate/BenchCompare.hpp"
#include "validate/BenchResult.hpp"
#include "validate/BenchScenario.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

namespace dbosim::cli {

int bench_result_command(const BenchResultOptions& o)
{
  namespace fs = std::filesystem;
  std::optional<validate::BenchFormat> format;
  if (!o.format.empty())
    format = validate::bench_format_from_name(o.format);
  const validate::BenchResult bench = validate::load_bench_result(o.bench_result, format, o.line);
  prepare_out_dir(o.out_dir);
  const std::string yaml           = (fs::path(o.out_dir) / "scenario.yaml").string();
  const validate::BenchScenario sc = validate::bench_scenario(o.scenario, bench, yaml);
  fmt::print("bench result: {} ({}, {}; the result on line {})\n", o.bench_result,
             validate::bench_format_name(bench.format), bench.format_given ? "--bench-format" : "told from its fields",
             bench.line);
  fmt::print("scenario: {} (simulated as {})\n", o.scenario, yaml);
  fmt::print("{}", validate::settings_text(sc));
  std::fflush(stdout); // the settings before a long run

  const ServingRun run = simulate_serving(sc.scenario);
  write_serving_outputs(sc.scenario, run, o.out_dir);
  const validate::BenchComparison c = validate::compare_bench(bench, serving::serving_samples(run.result));
  fmt::print("{}", validate::comparison_text(c));
  const std::string csv  = (fs::path(o.out_dir) / "validate.csv").string();
  const std::string json = (fs::path(o.out_dir) / "bench_result.json").string();
  write_file_atomic(csv, validate::results_csv(c.rows));
  write_file_atomic(json, validate::bench_json(bench, sc, c));
  fmt::print("wrote {}, {}, and the serving run's summary.json, requests.csv{} in {}\n", json, csv,
             sc.scenario.serving.step_trace ? ", steps.csv" : "", o.out_dir);
  return 0;
}

} // namespace dbosim::cli

#include "cli/ServingCommand.hpp"

#include "base/AtomicFile.hpp"
#include "cli/Progress.hpp"
#include "config/EngineTable.hpp"
#include "plan/LaunchCommand.hpp"
#include "serving/BucketError.hpp"
#include "serving/EngineOracle.hpp"
#include "serving/KvCapacity.hpp"
#include "serving/ServingMetrics.hpp"
#include "serving/ServingSim.hpp"
#include "serving/Workload.hpp"
#include "sim/output/OutputGuards.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace dbosim::cli {

using json = nlohmann::ordered_json;

bool has_serving_workload(const Scenario& s) { return s.requests.num_prompts > 0 || !s.requests.trace.empty(); }

namespace {
/** Speculative decoding: the closed-form yield next to the one the run's acceptance draws gave (tokens after the
 *  first per streamed chunk; a request's last chunk is cut at its output length). */
json speculative_block(const Scenario& s, const serving::ServingResult& res)
{
  long tokens = 0, chunks = 0;
  for (const serving::LiveRequest& l : res.live) {
    tokens += l.generated - 1;
    chunks += l.tokens.gaps();
  }
  return {{"method", models::spec_method_name(s.speculative.method)},
          {"num_speculative_tokens", s.speculative.num_speculative_tokens},
          {"acceptance_rate", s.speculative.acceptance_rate},
          {"expected_accepted_tokens", models::expected_accepted_tokens(s.speculative)},
          {"measured_tokens_per_chunk", chunks > 0 ? double(tokens) / double(chunks) : 0.0}};
}
/** Which expert load the steps were priced with, its source, and the busiest rank's load it gave (step mean). */
json expert_load_block(const Scenario& s, const serving::ServingResult& res)
{
  double sum = 0;
  for (const serving::StepRecord& r : res.steps)
    sum += r.hot_rank_load;
  const models::ExpertLoadModel m = s.parallel.ep > 1 ? expert_load_model(s.cluster) : models::ExpertLoadModel::ideal;
  return {{"model", models::expert_load_model_name(m)},
          {"source", models::expert_load_source_of(m)},
          {"mean_hot_rank_load", res.steps.empty() ? 1.0 : sum / double(res.steps.size())}};
}
} // namespace

ServingRun simulate_serving(const Scenario& s, const std::vector<std::string>& simgrid_args,
                            std::optional<sim::EngineKind> engine, bool share_shapes)
{
  using namespace serving;
  ServingRun run;
  run.kv               = kv_capacity(s);
  ServingParams params = serving_params(s, run.kv);
  if (isatty(STDERR_FILENO)) // progress for a person watching; never in a log or a pipe (outputs stay reproducible)
    params.on_progress = [bar       = Progress("serving run: requests finished", 0, false),
                          pass_seen = -1](int pass, std::size_t done, std::size_t total) mutable {
      if (pass != pass_seen) {
        pass_seen = pass;
        bar       = Progress(fmt::format("serving run, pass {}: requests finished", pass), total);
      }
      bar.update(done);
    };
  std::vector<Request> requests = make_requests(s.requests, s.seed);
  check_trace_step_bound(s, requests);
  EngineOracle oracle(s, 0, simgrid_args, engine.value_or(sim::EngineKind::simgrid), share_shapes);
  StepCache cache;
  run.result = run_serving(params, std::move(requests), s.requests.max_concurrency, oracle, cache);
  if (params.on_progress)
    fmt::print(stderr, "\r\033[K"); // clear the progress line
  const ServingResult& res = run.result;
  run.bucket_error         = measure_bucket_error(res, cache, oracle, s.serving.exact_samples);
  run.distinct_shapes      = static_cast<long>(cache.size());

  json& block              = run.block;
  block                    = serving_metrics(res, params.gpus);
  block["max_concurrency"] = s.requests.max_concurrency;
  block["request_rate"]    = s.requests.request_rate;
  block["burstiness"]      = s.requests.burstiness;
  block["dp"]              = s.parallel.dp;
  block["ep"]              = s.parallel.ep;
  block["gpus"]            = params.gpus;
  block["host_gap_us"]     = params.host_gap_us;
  block["kv_cache"]        = run.kv.to_json();
  block["expert_load"]     = expert_load_block(s, res);
  if (s.speculative.enabled())
    block["speculative"] = speculative_block(s, res);
  block["step_cache"] = {{"steps", res.steps.size()}, {"lookups", cache.lookups},
                         {"hits", cache.hits},        {"distinct_shapes", cache.size()},
                         {"passes", res.passes},      {"bucket_error", run.bucket_error}};

  run.summary["scenario"] = s.name;
  run.summary["model"]    = s.model.name;
  run.summary["seed"]     = s.seed;
  run.summary["serving"]  = block;
  run.launch              = plan::launch_command(s);
  run.summary["launch"]   = plan::launch_json(run.launch);
  sim::require_valid_summary(run.summary);
  return run;
}

void write_serving_outputs(const Scenario& s, const ServingRun& run, const std::string& out_dir)
{
  write_file_atomic(out_dir + "/requests.csv", serving::requests_csv(run.result));
  if (s.serving.step_trace)
    write_file_atomic(out_dir + "/steps.csv", serving::steps_csv(run.result));
  write_file_atomic(out_dir + "/summary.json", run.summary.dump(2) + "\n");
}

int serving_command(const Scenario& s, const std::string& out_dir, const std::vector<std::string>& simgrid_args,
                    std::optional<sim::EngineKind> engine, bool share_shapes)
{
  const auto t0      = std::chrono::steady_clock::now();
  const ServingRun r = simulate_serving(s, simgrid_args, engine, share_shapes);
  write_serving_outputs(s, r, out_dir);
  const serving::ServingResult& res = r.result;
  const json& block                 = r.block;

  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{}", serving::serving_text(block));
  fmt::print("step cache: {} steps, {} distinct shapes simulated (+{} exact for the bucket error: max {:.2f}%, mean "
             "{:.2f}%), {} passes\n",
             res.steps.size(), r.distinct_shapes, r.bucket_error["samples"].get<long>(),
             r.bucket_error["max_error_pct"].get<double>(), r.bucket_error["mean_error_pct"].get<double>(), res.passes);
  if (s.speculative.enabled())
    fmt::print("speculative decoding ({}, k = {}): {:.3f} tokens per request per step expected, {:.3f} drawn; ITL is "
               "per streamed chunk (vllm bench serve), TPOT per token\n",
               block["speculative"]["method"].get<std::string>(), s.speculative.num_speculative_tokens,
               block["speculative"]["expected_accepted_tokens"].get<double>(),
               block["speculative"]["measured_tokens_per_chunk"].get<double>());
  fmt::print("expert load: {} (busiest EP rank {:.3f}x the mean, step mean){}\n",
             block["expert_load"]["model"].get<std::string>(), block["expert_load"]["mean_hot_rank_load"].get<double>(),
             expert_load_model(s.cluster) != models::ExpertLoadModel::ideal && s.parallel.ep > 1
                 ? "; cluster.expert_load: ideal for balanced routing"
                 : "");
  fmt::print("KV cache: {} blocks x {} tokens per DP rank, peak {} used\n", r.kv.num_blocks, r.kv.block_size,
             res.peak_kv_blocks);
  fmt::print("\nlaunch ({}):\n{}", engine_row(s.engine).label, plan::format_launch(r.launch));
  fmt::print("wrote {}/summary.json, requests.csv{}\n", out_dir, s.serving.step_trace ? ", steps.csv" : "");
  std::fflush(stdout);
  fmt::print(stderr, "serving run: {:.2f} s wall\n", wall_s); // wall time: stderr, so stdout stays reproducible
  return 0;
}

} // namespace dbosim::cli

/* dbosim — `dbosim validate --bench-result FILE --scenario S.yaml`: a user's own serving benchmark (vllm bench serve
 * or sglang.bench_serving) predicted by the serving simulation of the scenario, with the run settings the bench file
 * states, and printed as predicted vs measured (validate/BenchResult, BenchScenario, BenchCompare). */
#pragma once
#include <string>

namespace dbosim::cli {

struct BenchResultOptions {
  std::string bench_result; ///< the bench file
  std::string scenario;     ///< the scenario to predict it with
  std::string format;       ///< --bench-format: "vllm", "sglang"; empty: told from the fields
  int line = 0;             ///< --bench-line: the record's line in a JSON-lines file; 0: the last
  std::string out_dir;      ///< scenario.yaml, summary.json, requests.csv, steps.csv, validate.csv, bench_result.json
};

/** @brief Reads, simulates, prints and writes; returns the exit code (0; bad input throws InputError). */
int bench_result_command(const BenchResultOptions& o);

} // namespace dbosim::cli

#!/usr/bin/env bash
# A sweep and a plan given by a bare file name in the folder that holds them, naming a hardware profile by a relative
# path: every point reads that profile (the point scenarios hold its absolute path) and the runs succeed, as `dbosim
# run` of the same file does. Usage: relative_paths_check.sh DBOSIM SOURCE_DIR OUT_DIR
set -u
exe=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") src=$2 out=$3
rm -rf "$out"
mkdir -p "$out/inputs"
fail=0
say() {
  echo "relative_paths_check: $*"
  fail=1
}
cp "$src/hwprofiles/h200.yaml" "$out/inputs/myh200.yaml"
printf '%s\n' 'model: deepseek-v3
hardware: myh200.yaml
cluster: {nodes: 1, gpus_per_node: 8, network: h200}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 64, context_len: 4096}
overlap: {enable_dbo: false, all2all_backend: deepep_low_latency}
execution: {cuda_graph: full}
seed: 1
sweep:
  workload.tokens_per_rank: [1, 64]' > "$out/inputs/s.yaml"
printf '%s\n' 'model: deepseek-v3
hardware: myh200.yaml
cluster: {nodes: 1, gpus_per_node: 8, network: h200}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 1, num_prompts: 32, max_concurrency: 16, random_input_len: 256,
           random_output_len: 16}
overlap: {enable_dbo: false, all2all_backend: deepep_low_latency}
execution: {cuda_graph: full}
seed: 1
sweep:
  workload.max_concurrency: [8, 16]
plan:
  demand: {output_tokens_per_s: 1000}
  slo: {p99_itl_ms: 500, p99_ttft_ms: 15000}' > "$out/inputs/p.yaml"
cd "$out/inputs" || exit 1
"$exe" sweep s.yaml --out ../sweep -j 1 > ../sweep.log 2>&1 || say "sweep of a bare file name with a relative profile failed: $(tail -n 3 ../sweep.log)"
grep -q "hardware: $out/inputs/myh200.yaml" ../sweep/points/0000/scenario.yaml 2> /dev/null ||
  grep -q "hardware: $(cd "$out/inputs" && pwd -P)/myh200.yaml" ../sweep/points/0000/scenario.yaml 2> /dev/null ||
  say "the sweep's point does not name the profile by its absolute path"
"$exe" plan p.yaml --out ../plan -j 1 > ../plan.log 2>&1 || say "plan of a bare file name with a relative profile failed: $(tail -n 3 ../plan.log)"
[ -s ../plan/points.csv ] || say "the plan wrote no points.csv"
exit $fail

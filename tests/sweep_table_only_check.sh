#!/usr/bin/env bash
# `dbosim sweep --table-only` against the sweep with its point folders: the same sweep.csv byte for byte (and the
# same as --engine simgrid's, each point in its own `dbosim run`) on a one-step sweep across GPUs, EP sizes, batches,
# overlap modes and a backend whose DBO step the replay cannot price exactly (SimGrid children); no points/ folder;
# the same exit 2 and message for a bad point value, and none of sweep.csv; exit 2 for serving points, --resume and
# --engine simgrid. Usage: sweep_table_only_check.sh DBOSIM OUT_DIR
set -u
exe=$1 out=$2
rm -rf "$out"
mkdir -p "$out"
fail=0
say() {
  echo "sweep_table_only_check: $*"
  fail=1
}
base='model: deepseek-v3
hardware: h200
cluster: {nodes: 1, gpus_per_node: 8}
parallel: {dp: 8, ep: 8, tp: 1}
workload: {phase: decode, tokens_per_rank: 64, context_len: 4096}
overlap: {enable_dbo: false, async_combine: false, all2all_backend: deepep_low_latency}
execution: {cuda_graph: full}
seed: 1'
printf '%s\n%s\n' "$base" 'sweep:
  hardware: [h200, b200]
  "parallel.ep,parallel.dp,cluster.nodes": [[8, 8, 1], [16, 16, 2]]
  workload.tokens_per_rank: [1, 64, 256]
  "overlap.enable_dbo,overlap.async_combine": [[false, false], [true, false]]
  overlap.all2all_backend: [deepep_low_latency, deepep_high_throughput]' > "$out/s.yaml"

# 1. The same sweep.csv three ways; --table-only writes no point folders.
"$exe" sweep "$out/s.yaml" -j 2 --out "$out/points" > "$out/points.log" 2>&1 || say "the sweep exited $?"
"$exe" sweep "$out/s.yaml" -j 2 --engine simgrid --out "$out/simgrid" > "$out/simgrid.log" 2>&1 ||
  say "the --engine simgrid sweep exited $?"
"$exe" sweep "$out/s.yaml" -j 2 --table-only --out "$out/table" > "$out/table.log" 2>&1 ||
  say "the --table-only sweep exited $?"
[ "$(wc -l < "$out/table/sweep.csv" 2> /dev/null)" = 49 ] || say "--table-only's sweep.csv does not hold 48 points"
cmp "$out/points/sweep.csv" "$out/table/sweep.csv" || say "--table-only's sweep.csv differs from the sweep's"
cmp "$out/simgrid/sweep.csv" "$out/table/sweep.csv" || say "--table-only's sweep.csv differs from --engine simgrid's"
[ ! -e "$out/table/points" ] || say "--table-only wrote point folders"
# the printed table (all but the last line, which names the folder) is the same
diff <(sed '$d' "$out/points.log") <(sed '$d' "$out/table.log") > /dev/null || say "the printed tables differ"

# 2. A bad value (points 2 and 4 of five, over two workers; then another axis's bad value) is exit 2 with the
#    sweep's message at its sweep line, and no sweep.csv.
bad_values() { # NAME, sweep lines
  printf '%s\nsweep:\n%s\n' "$base" "$2" > "$out/$1.yaml"
  local rc_points rc_table
  "$exe" sweep "$out/$1.yaml" -j 2 --out "$out/$1" > /dev/null 2> "$out/$1.points.err"
  rc_points=$?
  rm -rf "$out/$1"
  "$exe" sweep "$out/$1.yaml" -j 2 --table-only --out "$out/$1" > /dev/null 2> "$out/$1.table.err"
  rc_table=$?
  [ "$rc_points" = 2 ] && [ "$rc_table" = 2 ] || say "$1: exit $rc_points without --table-only, $rc_table with it"
  cmp "$out/$1.points.err" "$out/$1.table.err" > /dev/null ||
    say "$1: the messages differ: '$(cat "$out/$1.points.err")' and '$(cat "$out/$1.table.err")'"
  grep -q "sweep: point .* is not a valid scenario" "$out/$1.table.err" || say "$1: '$(cat "$out/$1.table.err")'"
  [ ! -e "$out/$1/sweep.csv" ] || say "$1: --table-only wrote sweep.csv for a bad point"
}
bad_values bad_batch '  workload.tokens_per_rank: [64, 96, 0, 128, 0]'
bad_values bad_gpu '  workload.tokens_per_rank: [64, 96]
  hardware: [h200, no_such_gpu]'

# 3. What --table-only refuses: serving points, --resume, --engine simgrid (exit 2, saying why).
refused() { # WORDS, arguments...
  local words=$1 err rc
  shift
  err=$("$exe" sweep "$@" 2>&1 > /dev/null)
  rc=$?
  [ "$rc" = 2 ] && [[ "$err" == *"$words"* ]] || say "'sweep $*' exited $rc: '$err' (expected 2: '$words')"
}
printf '%s\n%s\n' "$base" 'sweep:
  workload.num_prompts: [16, 32]' > "$out/serving.yaml"
refused "--table-only prices one-step points" "$out/serving.yaml" --table-only --out "$out/serving"
refused "nothing for --resume to keep" "$out/s.yaml" --table-only --resume --out "$out/resume"
refused "--engine simgrid runs each point" "$out/s.yaml" --table-only --engine simgrid --out "$out/simgrid2"
[ ! -e "$out/serving/sweep.csv" ] || say "a refused --table-only sweep wrote sweep.csv"
exit $fail

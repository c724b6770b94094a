#!/usr/bin/env bash
# The three search benchmarks (docs/results.md, "Speed"), timed on this machine (wall seconds and peak RSS from /usr/bin/time):
#   bench/search/run.sh [BUILD_DIR]        (default: build)
# 1. a 10,000-point one-rank step sweep (bench/search/sweep_10k.yaml) on the default engine (auto);
# 2. the shipped plan (plans/dsv3_decode_h200_b200.yaml, 32 serving points) and a 1,024-point serving plan
#    (bench/search/plan_1k.yaml);
# 3. the EP1024 DeepSeek-V3 DBO decode step, every rank simulated, default trace (build/bench/cluster_step_bench
#    measures the same step inside one process).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$here/build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
run() { # label, command...
  local label="$1"
  shift
  /usr/bin/time -f "$label: %e s wall, %M KB peak RSS" "$@" > "$out/log.txt" 2> "$out/time.txt" || {
    cat "$out/log.txt" "$out/time.txt"
    exit 1
  }
  tail -n 1 "$out/time.txt"
}
run "sweep 10,000 step points (-j 2)" "$build/dbosim" sweep "$here/bench/search/sweep_10k.yaml" -j 2 --out "$out/sweep"
run "shipped plan, 32 points (-j 2)" "$build/dbosim" plan "$here/plans/dsv3_decode_h200_b200.yaml" -j 2 --out "$out/plan"
run "plan, 1,024 serving points (-j 2)" "$build/dbosim" plan "$here/bench/search/plan_1k.yaml" -j 2 --out "$out/plan1k"
run "EP1024 DBO decode step, every rank" "$build/dbosim" run \
  "$here/scenarios/dsv3_decode_ep1024_gb200_zipf_eplb.yaml" --out "$out/ep1024"

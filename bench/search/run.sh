#!/usr/bin/env bash
# The search benchmarks (docs/results.md, "Speed"), timed on this machine (wall and CPU seconds, peak RSS from /usr/bin/time):
#   bench/search/run.sh [BUILD_DIR]        (default: build)
# 1. a 10,000-point one-rank step sweep (bench/search/sweep_10k.yaml) on the default engine (auto), then again with
#    --table-only (its sweep.csv compared with the first's), and a 100,000-point one (bench/search/sweep_100k.yaml)
#    with --table-only;
# 2. the shipped plan (plans/dsv3_decode_h200_b200.yaml, 16 launchable serving points of 32 swept) and a 1,024-point serving plan
#    (bench/search/plan_1k.yaml), again under `mpirun -np 2` where OpenMPI is installed (its points.csv compared), and a
#    10,240-point one (bench/search/plan_10k.yaml: MTP off and on, 8 concurrencies);
#    the shipped plan again into an empty --step-cache and a second time over it (each
#    point's result from the point cache: no point run again), its points.csv compared with the first run's;
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
  /usr/bin/time -f "$label: %e s wall, %U s user + %S s sys CPU, %M KB peak RSS" "$@" > "$out/log.txt" 2> "$out/time.txt" || {
    cat "$out/log.txt" "$out/time.txt"
    exit 1
  }
  tail -n 1 "$out/time.txt"
}
run "sweep 10,000 step points (-j 2)" "$build/dbosim" sweep "$here/bench/search/sweep_10k.yaml" -j 2 --out "$out/sweep"
run "sweep 10,000 step points, --table-only (-j 2)" "$build/dbosim" sweep "$here/bench/search/sweep_10k.yaml" -j 2 \
  --table-only --out "$out/sweep-table"
cmp "$out/sweep/sweep.csv" "$out/sweep-table/sweep.csv" || { echo "--table-only: sweep.csv differs"; exit 1; }
echo "sweep --table-only: sweep.csv identical to the point folders' sweep"
run "sweep 100,000 step points, --table-only (-j 2)" "$build/dbosim" sweep "$here/bench/search/sweep_100k.yaml" -j 2 \
  --table-only --out "$out/sweep100k"
run "shipped plan, 16 points (-j 2)" "$build/dbosim" plan "$here/plans/dsv3_decode_h200_b200.yaml" -j 2 --out "$out/plan"
run "shipped plan, empty --step-cache (-j 2)" "$build/dbosim" plan "$here/plans/dsv3_decode_h200_b200.yaml" -j 2 \
  --out "$out/plan-cold" --step-cache "$out/cache"
run "shipped plan, warm --step-cache (-j 2)" "$build/dbosim" plan "$here/plans/dsv3_decode_h200_b200.yaml" -j 2 \
  --out "$out/plan-warm" --step-cache "$out/cache"
for run_dir in plan-cold plan-warm; do
  cmp "$out/plan/points.csv" "$out/$run_dir/points.csv" || { echo "$run_dir: points.csv differs"; exit 1; }
done
echo "step cache: points.csv identical without the cache, cold and warm ($(du -sh "$out/cache" | cut -f1) on disk)"
run "plan, 1,024 serving points (-j 2)" "$build/dbosim" plan "$here/bench/search/plan_1k.yaml" -j 2 --out "$out/plan1k"
if command -v mpirun > /dev/null; then
  run "plan, 1,024 serving points, mpirun -np 2 (a rank bound to each core)" mpirun --allow-run-as-root -np 2 \
    "$build/dbosim" plan "$here/bench/search/plan_1k.yaml" --out "$out/plan1k-mpi"
  cmp "$out/plan1k/points.csv" "$out/plan1k-mpi/points.csv" || { echo "mpirun -np 2: points.csv differs"; exit 1; }
  echo "mpirun -np 2: points.csv identical to one process's"
fi
run "plan, 10,240 serving points (-j 2)" "$build/dbosim" plan "$here/bench/search/plan_10k.yaml" -j 2 --out "$out/plan10k"
run "EP1024 DBO decode step, every rank" "$build/dbosim" run \
  "$here/scenarios/dsv3_decode_ep1024_gb200_zipf_eplb.yaml" --out "$out/ep1024"

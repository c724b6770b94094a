#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/targets.txt) long (default 1,000,000 inputs each) from the shipped files as seeds
# and the committed corpus (fuzz/corpus/<target>/), steered by the libraries' coverage, and prints inputs tried and
# crashes per target. Crashing inputs are left in out/fuzz/<target>/ : copy each into fuzz/regressions/<target>/ once
# fixed, so the test suite replays it; new corpus units (out/fuzz/<target>/corpus) join fuzz/corpus/<target>/ by
# libFuzzer's -merge=1.
# Usage: scripts/fuzz.sh [RUNS [TARGET...]]   (FUZZ_SETUP=0 skips scripts/setup.sh; FUZZ_MAX_SECONDS=N stops each
# target after N seconds even if RUNS were not reached)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
[ "${FUZZ_SETUP:-1}" = 0 ] || scripts/setup.sh
declare -A seeds
names=()
while read -r name dirs; do
  seeds[$name]=$dirs
  names+=("$name")
done < <(grep -E '^[a-z]' fuzz/targets.txt)
[ $# -eq 0 ] || names=("$@")
# Its own build: the libraries carry libFuzzer's coverage here (the test suite's build-san does not; see CMakeLists).
CC=clang CXX=clang++ cmake -S . -B build-fuzz-cov -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDBO_FUZZ=ON -DDBO_FUZZ_COVERAGE=ON \
  -DDBO_ENABLE_CUDA=OFF -DDBO_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz-cov -j"$(nproc)" --target "${names[@]/#/fuzz_}"
printf '%-18s %12s %8s\n' target inputs crashes
for name in "${names[@]}"; do
  [ -n "${seeds[$name]:-}" ] || { echo "unknown fuzz target $name (see fuzz/targets.txt)"; exit 2; }
  mkdir -p "out/fuzz/$name/corpus"
  # Inputs up to twice the largest seed (4 KiB..128 KiB): libFuzzer otherwise takes its limit from the largest corpus
  # file, and a corpus that grew large inputs slows a YAML target ~10x (hwprofile: ~90 -> ~1000 inputs/s).
  # shellcheck disable=SC2086
  largest=$(find ${seeds[$name]} -type f -printf '%s\n' | sort -n | tail -1)
  max_len=$((2 * ${largest:-0}))
  max_len=$((max_len < 4096 ? 4096 : max_len > 131072 ? 131072 : max_len))
  log="out/fuzz/$name/log.txt"
  # The committed corpus only where the target has one: libFuzzer stops at once on a folder that does not exist.
  committed=()
  [ ! -d "fuzz/corpus/$name" ] || committed=("fuzz/corpus/$name")
  # shellcheck disable=SC2086 # the seed folders are words
  build-fuzz-cov/fuzz/fuzz_$name -runs="$runs" ${FUZZ_MAX_SECONDS:+-max_total_time=$FUZZ_MAX_SECONDS} -timeout=10 -max_len="$max_len" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="out/fuzz/$name/" \
    "out/fuzz/$name/corpus" "${committed[@]}" ${seeds[$name]} >"$log" 2>&1 || true
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "out/fuzz/$name" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o \
    -name 'oom-*' \) | wc -l) # not ls: with pipefail, no match would end the script
  printf '%-18s %12s %8s\n' "$name" "${inputs:-?}" "$crashes"
  # A target that ran no input found nothing: say so and fail the run rather than print a clean row.
  [ -n "$inputs" ] || { echo "$name ran no input (its log: $log)" >&2; failed=1; }
  [ "$crashes" -eq 0 ] || failed=1
done
exit "${failed:-0}"

#!/usr/bin/env bash
# Runs every libFuzzer target long (default 1,000,000 inputs each) from the shipped files as seeds and prints
# inputs tried and crashes per target. Crashing inputs are left in out/fuzz/<target>/ : copy each into
# fuzz/regressions/<target>/ once fixed, so the test suite replays it. Usage: scripts/fuzz.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
scripts/setup.sh
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDBO_FUZZ=ON -DDBO_ENABLE_CUDA=OFF \
  -DDBO_BENCHMARKS=OFF >/dev/null
targets=(scenario:scenarios hwprofile:hwprofiles model_yaml:models/zoo hf_config:tests/data)
cmake --build build-fuzz -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]%%:*}")
printf '%-12s %12s %8s\n' target inputs crashes
for entry in "${targets[@]}"; do
  name=${entry%%:*} seeds=${entry#*:}
  mkdir -p "out/fuzz/$name/corpus"
  log="out/fuzz/$name/log.txt"
  build-fuzz/fuzz/fuzz_$name -runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="out/fuzz/$name/" "out/fuzz/$name/corpus" "$seeds" >"$log" 2>&1 || true
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(ls "out/fuzz/$name"/crash-* "out/fuzz/$name"/leak-* "out/fuzz/$name"/timeout-* 2>/dev/null | wc -l)
  printf '%-12s %12s %8s\n' "$name" "${inputs:-?}" "$crashes"
done

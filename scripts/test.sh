#!/usr/bin/env bash
# Installs what is missing, builds dbosim (CUDA kernels too when nvcc is found), runs the default scenario
# and the whole test suite; then builds once more with CUDA off under ASan+UBSan and runs the suite there; then builds
# the libFuzzer targets and runs each for a fixed number of inputs (deterministic). Prints each stage's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
started=$SECONDS
stage_start=$SECONDS
stage() { # stage NAME: the time since the previous stage ended
  echo "test.sh: stage $1 took $((SECONDS - stage_start)) s (total $((SECONDS - started)) s)"
  stage_start=$SECONDS
}
scripts/setup.sh
stage setup
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
stage "Release build"
build/dbosim run scenarios/default.yaml --out out/default
(cd build && ctest --output-on-failure -j"$jobs")
stage "Release tests"
# The no-CUDA configuration (so that path cannot rot), with sanitizers.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDBO_ENABLE_CUDA=OFF -DDBO_SANITIZE=ON \
  -DDBO_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j"$jobs"
stage "ASan+UBSan build"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")
stage "ASan+UBSan tests"
# libFuzzer targets (clang), each run for a fixed number of inputs from the shipped files and the regressions;
# scripts/fuzz.sh runs them long with fresh seeds.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDBO_FUZZ=ON -DDBO_ENABLE_CUDA=OFF \
  -DDBO_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target $(sed -n 's/^\([a-z0-9_]*\) .*/fuzz_\1/p' fuzz/targets.txt) # every target
stage "fuzz build"
(cd build-fuzz && ctest --output-on-failure -L fuzz -j"$jobs")
stage "fuzz runs"

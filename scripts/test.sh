#!/usr/bin/env bash
# Installs what is missing, builds dbosim (CUDA kernels too when nvcc is found), runs the default scenario
# and the whole test suite; then builds once more with CUDA off under ASan+UBSan and runs the suite there.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
build/dbosim run scenarios/default.yaml --out out/default
(cd build && ctest --output-on-failure -j"$jobs")
# The no-CUDA configuration (so that path cannot rot), with sanitizers.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDBO_ENABLE_CUDA=OFF -DDBO_SANITIZE=ON \
  -DDBO_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")
# libFuzzer targets (clang), each run briefly from the shipped files; scripts/fuzz.sh runs them long.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDBO_FUZZ=ON -DDBO_ENABLE_CUDA=OFF \
  -DDBO_BENCHMARKS=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target $(sed -n 's/^\([a-z0-9_]*\) .*/fuzz_\1/p' fuzz/targets.txt) # every target
(cd build-fuzz && ctest --output-on-failure -L fuzz -j"$jobs")

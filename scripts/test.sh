#!/usr/bin/env bash
# Installs what is missing, builds dbosim (CUDA kernels too when nvcc is found), runs the default scenario
# and the whole test suite, each test once: the Release build runs the slow ones (the [slow] cases, the CLI matrix,
# the plan reports) and the repository checks; a second build, clang, CUDA off, under ASan+UBSan with the libFuzzer
# targets, runs the unit, scenario and abuse tests and each fuzz target over a fixed set of inputs (deterministic).
# Prints each stage's time.
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
# Each test runs once: here what the sanitizer build cannot afford or need not repeat (the [slow] cases, the CLI
# matrix, the plan reports, the repository checks); the unit, scenario, abuse and fuzz tests run under ASan+UBSan.
(cd build && ctest --output-on-failure -j"$jobs" -LE '^(unit|scenario|abuse|fuzz)$')
stage "Release tests (slow, cli, plan, repo)"
# The no-CUDA configuration (so that path cannot rot) under ASan+UBSan, built with clang (a quarter of GCC's compile
# time under the sanitizers), with the libFuzzer targets in the same tree: the suite runs there, and each fuzz target
# once over its regressions, committed corpus and the shipped files (deterministic; scripts/fuzz.sh runs them long).
# Line tables only: the sanitizers' reports name file and line (inlined frames too) at a fraction of full debug
# information's compile and link time.
CC=clang CXX=clang++ cmake -S . -B build-san -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" -DDBO_ENABLE_CUDA=OFF -DDBO_SANITIZE=ON \
  -DDBO_FUZZ=ON -DDBO_BENCHMARKS=OFF >/dev/null
cmake --build build-san -j"$jobs"
stage "ASan+UBSan build (clang, with the fuzz targets)"
(cd build-san && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs" \
  -LE '^repo$')
stage "ASan+UBSan tests (unit, scenario, abuse) and fuzz runs"

#!/usr/bin/env bash
# Installs what is missing, builds dbosim and runs the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
build/dbosim run scenarios/default.yaml --out out/default "$@"

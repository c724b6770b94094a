#!/bin/bash
# Runs the overlap testbed on this machine's GPU (what produced validate/testbed/*.json):
#   validate/testbed/run_on_gpu.sh PLAN_DIR OUT_DIR [REPS]
# PLAN_DIR holds the plan files from `dbosim validate --write-testbed-plans PLAN_DIR` (written on any machine: the
# schedules' op lists and the kernels' shapes). Needs CUDA (nvcc, cuBLAS) and CMake only. Writes OUT_DIR/<case>.json
# (Chrome trace of every repeat) and OUT_DIR/testbed.log; then copy the JSON files to validate/testbed/.
set -o pipefail
PLANS=${1:?usage: run_on_gpu.sh PLAN_DIR OUT_DIR [REPS]}
OUT=${2:?usage: run_on_gpu.sh PLAN_DIR OUT_DIR [REPS]}
REPS=${3:-7}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
# kernels/CMakeLists.txt wants nlohmann/json.hpp for the calibration program; the testbed needs none, so any folder
# satisfies the option when the header is absent.
JSON_INC=${DBO_JSON_INCLUDE:-$(mktemp -d)}
cmake -S kernels -B build-gpu -DDBO_JSON_INCLUDE="$JSON_INC" > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu --target dbosim-overlap-testbed -j"$(nproc)" >> "$OUT/build.log" 2>&1 || {
  tail -30 "$OUT/build.log"
  exit 1
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/testbed.log"
./build-gpu/dbosim-overlap-testbed "$PLANS"/*.txt --out "$OUT" --reps "$REPS" 2>&1 | tee -a "$OUT/testbed.log"

#!/bin/bash
# Runs the whole calibration on this machine's GPU (what produced tests/data/calib/h200_raw.jsonl):
#   calibrate/run_on_gpu.sh OUT_DIR [--quick]
# Needs CUDA (nvcc, cuBLAS), CMake, python3 with torch and triton; NCCL is optional (collectives need >= 2 GPUs).
# kernels/torch_serving_kernels.py adds what serving engines launch through PyTorch (grouped GEMMs, block-scaled FP8,
# LM heads, prefill attention over a context, kernel floors and host costs).
# FLASHMLA_SRC (optional): a FlashMLA checkout with its cutlass submodule; then kernels/flashmla_decode.py builds
# FlashMLA's dense sm90 decode and measures it (family mla_decode_flashmla, which the fit's mla_decode table prefers);
# without it that step is skipped with a message and the mla_decode table comes from the Triton/cuBLAS kernels.
# Writes OUT_DIR/raw.jsonl (resumable: run it again after a kill), OUT_DIR/verify.jsonl (a fresh process re-measuring
# the GEMM 4096x4096x7168 BF16 and the copy kernel right after), and logs. Then, on any machine:
#   build/dbosim-calibrate fit --raw OUT_DIR/raw.jsonl --verify OUT_DIR/verify.jsonl \
#     --base tests/data/calib/h200_datasheet.yaml --out hwprofiles/h200.yaml
#   build/dbosim-calibrate report --raw OUT_DIR/raw.jsonl --verify OUT_DIR/verify.jsonl
set -o pipefail
OUT=${1:?usage: run_on_gpu.sh OUT_DIR [--quick]}
MODE=${2:---full}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 # never NVLink multicast
COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo "${DBO_GIT_COMMIT:-unknown}")
JSON_INC=${DBO_JSON_INCLUDE:-}
NCCLDIR=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null)
cmake -S kernels -B build-gpu ${JSON_INC:+-DDBO_JSON_INCLUDE=$JSON_INC} ${NCCLDIR:+-DNCCL_ROOT=$NCCLDIR} \
  > "$OUT/build.log" 2>&1 && cmake --build build-gpu -j"$(nproc)" >> "$OUT/build.log" 2>&1 || {
  tail -30 "$OUT/build.log"
  exit 1
}
[ -n "$NCCLDIR" ] && export LD_LIBRARY_PATH=$NCCLDIR/lib:$LD_LIBRARY_PATH
./build-gpu/dbosim-calibrate-run "$MODE" --out "$OUT/raw.jsonl" --git-commit "$COMMIT" 2>&1 | tee -a "$OUT/run.log" |
  grep -v "us  (eta" || exit 1
QUICK=$([ "$MODE" = "--quick" ] && echo --quick)
python3 kernels/torch_attention.py "$OUT/raw.jsonl" $QUICK 2>&1 | tee "$OUT/sdpa.log" | tail -2
python3 kernels/triton_mla_decode.py "$OUT/raw.jsonl" $QUICK 2>&1 | tee "$OUT/triton.log" | grep cfg
if [ -n "${FLASHMLA_SRC:-}" ]; then
  FLASHMLA_BUILD=${FLASHMLA_BUILD:-$PWD/build-gpu/flashmla-build} python3 kernels/flashmla_decode.py "$OUT/raw.jsonl" \
    $QUICK 2>&1 | tee "$OUT/flashmla.log" | grep -E "^(built|correct|done)"
else
  echo "FLASHMLA_SRC not set: skipping FlashMLA's MLA decode (kernels/flashmla_decode.py); mla_decode from Triton/cuBLAS"
fi
python3 kernels/torch_serving_kernels.py "$OUT/raw.jsonl" $QUICK 2>&1 | tee "$OUT/torch_serving.log" | grep done
./build-gpu/dbosim-calibrate-run --verify --out "$OUT/verify.jsonl" --git-commit "$COMMIT" | tee "$OUT/verify.log"

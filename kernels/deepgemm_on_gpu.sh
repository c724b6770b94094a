#!/usr/bin/env bash
# Measures DeepSeek's FP8 GEMMs with DeepGEMM on this GPU and appends the records to RAW (kernels/deepgemm_kernels.py
# says which). DG_SRC: a DeepGEMM checkout whose JIT compiles with nvcc (the Python-JIT versions of 2025, e.g.
# commit 55ab91f, the one whose README figures validate/cases/deepgemm.yaml holds); CUTLASS: its include folder
# (DeepGEMM's third-party/cutlass/include by default). Usage: DG_SRC=DIR kernels/deepgemm_on_gpu.sh RAW [--quick]
# DG_SCRIPT: another script of kernels/ to run in the same environment (default deepgemm_kernels.py; e.g.
# deepgemm_sm_scaling.py, the SM-count curves of the same kernels).
set -euo pipefail
: "${DG_SRC:?set DG_SRC to a DeepGEMM checkout}"
raw=${1:?usage: DG_SRC=DIR kernels/deepgemm_on_gpu.sh RAW [--quick]}
shift
cutlass=${CUTLASS:-$DG_SRC/third-party/cutlass/include}
for d in cute cutlass; do # DeepGEMM's JIT looks for them beside its own headers
  [ -e "$DG_SRC/deep_gemm/include/$d" ] || ln -s "$(realpath "$cutlass/$d")" "$DG_SRC/deep_gemm/include/$d"
done
# Its JIT passes nvcc -std=c++17 with g++'s -fconcepts: newer g++ headers then use `requires`, which nvcc's C++17
# front end rejects. C++20 (nvcc >= 12) compiles them; the kernels are unchanged.
sed -i -e "s/'-std=c++17'/'-std=c++20'/" -e "s/, '-fconcepts'//" "$DG_SRC/deep_gemm/jit/compiler.py"
# CUDA 13's cudaTypedefs.h names the driver entry point's type by version only (..._v12000).
if nvcc --version | grep -q "release 1[3-9]" && ! grep -q "_v12000" "$DG_SRC/deep_gemm/jit/compiler.py"; then
  sed -i "s/'-shared', /'-shared', '-DPFN_cuTensorMapEncodeTiled=PFN_cuTensorMapEncodeTiled_v12000', /" \
    "$DG_SRC/deep_gemm/jit/compiler.py"
fi
export DG_COMMIT=${DG_COMMIT:-$(git -C "$DG_SRC" rev-parse --short=7 HEAD 2>/dev/null || echo unknown)}
export DG_CACHE_DIR=${DG_CACHE_DIR:-$(mktemp -d)}
export DBO_GIT_COMMIT=${DBO_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
export DG_SRC
exec python3 "$(dirname "$0")/${DG_SCRIPT:-deepgemm_kernels.py}" "$raw" "$@"

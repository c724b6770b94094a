#!/usr/bin/env bash
# Measures DeepSeek's FP8 GEMMs with DeepGEMM on this GPU and appends the records to RAW (kernels/deepgemm_kernels.py
# says which). calibrate/run_on_gpu.sh runs it (stages deepgemm and deepgemm_sm); by hand:
#   DG_SRC=DIR DG_COMMIT=SHA DG_CUTLASS_COMMIT=SHA kernels/deepgemm_on_gpu.sh RAW [--quick] [--jobs N]
# DG_SRC: a DeepGEMM of the Python-JIT kind (e.g. commit 55ab91f, the one whose README figures
# validate/cases/deepgemm.yaml holds); CUTLASS: its include folder (DG_SRC/third-party/cutlass/include by default).
# DG_COMMIT and DG_CUTLASS_COMMIT are required (the records carry them). DG_SRC is never written to: its deep_gemm/
# package is copied to DG_WORK (default: a temporary folder) and patched there. DG_SCRIPT: another script of kernels/
# to run in the same environment (default deepgemm_kernels.py; deepgemm_sm_scaling.py: the SM-count curves).
set -euo pipefail
usage="usage: DG_SRC=DIR DG_COMMIT=SHA DG_CUTLASS_COMMIT=SHA kernels/deepgemm_on_gpu.sh RAW [--quick] [--jobs N]"
die() { # bad input: exit 2, as every dbosim command
  echo "deepgemm_on_gpu.sh: $*" >&2
  exit 2
}
case "${1:-}" in -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' && exit 0 ;; esac
[ -n "${DG_SRC:-}" ] || die "set DG_SRC to a DeepGEMM checkout; $usage"
[ -n "${DG_COMMIT:-}" ] || die "set DG_COMMIT to the DeepGEMM commit of DG_SRC; $usage"
[ -n "${DG_CUTLASS_COMMIT:-}" ] || die "set DG_CUTLASS_COMMIT to the commit of its CUTLASS; $usage"
[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || die "$usage"
raw=$1
shift
rest=("$@")
while [ $# -gt 0 ]; do # the flags the measuring scripts read (deepgemm_kernels.py: --quick, --jobs N)
  case "$1" in
  --quick) ;;
  --jobs)
    [[ "${2:-}" =~ ^[1-9][0-9]{0,3}$ ]] || die "--jobs needs a count 1..9999; $usage"
    shift
    ;;
  *) die "unknown option '$1'; $usage" ;;
  esac
  shift
done
set -- "${rest[@]}"
cutlass=$(realpath "${CUTLASS:-$DG_SRC/third-party/cutlass/include}")
work=${DG_WORK:-$(mktemp -d)}
mkdir -p "$work"
rm -rf "$work/deep_gemm"
cp -r "$DG_SRC/deep_gemm" "$work/deep_gemm" # the copy is what is patched and imported
mkdir -p "$work/deep_gemm/include"
for d in cute cutlass; do                   # DeepGEMM's JIT looks for them beside its own headers
  ln -sfn "$cutlass/$d" "$work/deep_gemm/include/$d"
done
# Its JIT passes nvcc -std=c++17 with g++'s -fconcepts: newer g++ headers then use `requires`, which nvcc's C++17
# front end rejects. C++20 (nvcc >= 12) compiles them; the kernels are unchanged.
sed -i -e "s/'-std=c++17'/'-std=c++20'/" -e "s/, '-fconcepts'//" "$work/deep_gemm/jit/compiler.py"
# CUDA 13's cudaTypedefs.h names the driver entry point's type by version only (..._v12000).
if nvcc --version | grep -q "release 1[3-9]" && ! grep -q "_v12000" "$work/deep_gemm/jit/compiler.py"; then
  sed -i "s/'-shared', /'-shared', '-DPFN_cuTensorMapEncodeTiled=PFN_cuTensorMapEncodeTiled_v12000', /" \
    "$work/deep_gemm/jit/compiler.py"
fi
export DG_CACHE_DIR=${DG_CACHE_DIR:-$(mktemp -d)}
export DBO_GIT_COMMIT=${DBO_GIT_COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null)}
: "${DBO_GIT_COMMIT:?not in a git checkout of dbosim: set DBO_GIT_COMMIT}"
export DG_SRC=$work DG_COMMIT DG_CUTLASS_COMMIT
exec python3 "$(dirname "$0")/${DG_SCRIPT:-deepgemm_kernels.py}" "$raw" "$@"

#!/bin/bash
# The whole H200 calibration as one job: every stage the shipped profile is fitted from, into OUT.
#   calibrate/run_on_gpu.sh OUT [--deepgemm DIR] [--flashmla DIR] [--commit TREE=SHA]... [--skip STAGE]... [--quick]
# Stages, in order (calibrate/README.md says what each measures and how long it takes on an H200):
#   build        the C++ suite (kernels/, CMake + nvcc)
#   suite        dbosim-calibrate-run --full: cuBLASLt GEMMs, grouped GEMMs, attention, norms, SM scaling and
#                per-shape SM tables on green contexts, interference, host costs, NCCL with >= 2 GPUs
#   torch        PyTorch SDPA prefill, the Triton MLA decode, what serving engines launch through PyTorch, MLA's
#                per-head products (torch.bmm)
#   graph_gaps   eager / one-graph / piecewise kernel gaps (host.graph_launch, eager_kernel_gap, graph_piece_gap)
#   flashmla     FlashMLA's dense sm90 decode (the mla_decode tables)
#   deepgemm     DeepGEMM's dense and m-grouped FP8 GEMMs
#   deepgemm_sm  the same kernels given fewer SMs (the gemm and grouped_gemm SM-scaling curves)
#   verify       a fresh process re-measuring a GEMM and the copy kernel
# A finished stage leaves OUT/stages/STAGE.done and is skipped when the command is run again (after a kill, say);
# the suite also resumes inside its stage. Each stage's log is OUT/logs/STAGE.log; OUT/stages/times.tsv the timings.
# Sources: --deepgemm DIR / --flashmla DIR are checkouts or exported trees (DeepGEMM 55ab91f with CUTLASS eefa171,
# FlashMLA 9241ae3 with CUTLASS 147f567); without --deepgemm an installed `deep_gemm` Python package is used. They
# are never written to: the stages work on copies under OUT/scratch.
# Commits: each tree's commit comes from git (the top of a work tree), else a COMMIT file at its top, else
# --commit TREE=SHA (TREE one of dbosim, deepgemm, deepgemm-cutlass, flashmla, flashmla-cutlass); when none gives it
# the job stops before measuring anything (exit 2). Every record's environment carries them.
# Needs: an NVIDIA GPU with nvcc (CUDA 12.8+), cuBLAS, CMake, g++, git, nlohmann-json's header (Debian:
# nlohmann-json3-dev, or DBO_JSON_INCLUDE=DIR holding nlohmann/json.hpp), python3 with torch and triton; NCCL is
# optional (collectives need >= 2 GPUs). Checked before anything runs (exit 2 naming what is missing).
# Then, on any machine: build-dev/dbosim-calibrate fit OUT --out NEW.yaml (it prints the gate to run next).
set -o pipefail
usage="usage: calibrate/run_on_gpu.sh OUT [--deepgemm DIR] [--flashmla DIR] [--commit TREE=SHA]... [--skip STAGE]... [--quick]"
STAGES=(build suite torch graph_gaps flashmla deepgemm deepgemm_sm verify)
die() { # bad input: exit 2, as every dbosim command
  echo "run_on_gpu.sh: $*" >&2
  exit 2
}
help() { sed -n '2,/^set -o/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) help && exit 0 ;; esac
[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || die "$usage"
OUT=$(realpath -m "$1")
shift
value() { # OPTION [VALUE...]: the option's value, or exit 2 when there is none
  [ $# -ge 2 ] && [ -n "$2" ] && [ "${2#--}" = "$2" ] || die "$1 needs a value; $usage"
  printf '%s' "$2"
}
DG_DIR="" FM_DIR="" QUICK="" SKIP=" "
declare -A COMMIT_OPT
while [ $# -gt 0 ]; do
  case "$1" in
  --deepgemm)
    v=$(value "$@") || exit 2
    DG_DIR=$(realpath -m "$v") && shift
    ;;
  --flashmla)
    v=$(value "$@") || exit 2
    FM_DIR=$(realpath -m "$v") && shift
    ;;
  --commit)
    kv=$(value "$@") || exit 2
    case "${kv%%=*}" in dbosim | deepgemm | deepgemm-cutlass | flashmla | flashmla-cutlass) ;;
    *) die "--commit $kv: unknown tree '${kv%%=*}' (valid: dbosim, deepgemm, deepgemm-cutlass, flashmla, flashmla-cutlass)" ;;
    esac
    [[ "${kv#*=}" =~ ^[0-9a-f]{7,40}$ ]] || die "--commit $kv: '${kv#*=}' is not a commit (7-40 hex digits)"
    COMMIT_OPT[${kv%%=*}]=${kv#*=}
    shift
    ;;
  --skip)
    [[ " ${STAGES[*]} " == *" ${2:-} "* ]] || die "--skip ${2:-}: unknown stage (valid: ${STAGES[*]})"
    SKIP+="$2 "
    shift
    ;;
  --quick) QUICK=--quick ;;
  -h | --help)
    help
    exit 0
    ;;
  *) die "unknown option '$1'; $usage" ;;
  esac
  shift
done
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO" || exit 1
skipped() { [[ "$SKIP" == *" $1 "* ]]; }

# ---- the commit of a tree: git (when DIR is the top of a work tree), its COMMIT file, the parent's gitlink, --commit
tree_commit() { # NAME DIR [PARENT SUBPATH]
  local name=$1 dir=$2 top c
  top=$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null)
  if [ -n "$top" ] && [ "$(realpath "$top")" = "$(realpath "$dir")" ]; then
    git -C "$dir" rev-parse HEAD
  elif [ -s "$dir/COMMIT" ]; then
    tr -d '[:space:]' < "$dir/COMMIT"
  elif [ -n "${3:-}" ] && c=$(git -C "$3" ls-tree HEAD "$4" 2>/dev/null | awk '$2=="commit"{print $3}') && [ -n "$c" ]; then
    echo "$c"
  elif [ -n "${COMMIT_OPT[$name]:-}" ]; then
    echo "${COMMIT_OPT[$name]}"
  else
    return 1
  fi
}
need_commit() { # NAME DIR [PARENT SUBPATH]: prints the commit or stops the job
  local c
  c=${COMMIT_OPT[$1]:-$(tree_commit "$@")} ||
    die "no commit for $1 ($2): not the top of a git work tree, no COMMIT file there; pass --commit $1=SHA"
  echo "$c"
}
DBO_GIT_COMMIT=$(need_commit dbosim "$REPO") || exit 2
export DBO_GIT_COMMIT

# ---- sources: check them all before anything runs
if ! skipped deepgemm || ! skipped deepgemm_sm; then
  if [ -z "$DG_DIR" ]; then # an installed package: its folder's parent holds deep_gemm/
    pkg=$(python3 -c "import deep_gemm, os; print(os.path.dirname(os.path.dirname(deep_gemm.__file__)))" 2>/dev/null) ||
      die "DeepGEMM: pass --deepgemm DIR (DeepGEMM 55ab91f with its third-party/cutlass) or install deep_gemm; or --skip deepgemm --skip deepgemm_sm"
    DG_DIR=$pkg
    [ -n "${COMMIT_OPT[deepgemm]:-}" ] || die "DeepGEMM from the installed package in $pkg: pass --commit deepgemm=SHA"
  fi
  [ -f "$DG_DIR/deep_gemm/jit/compiler.py" ] || die "--deepgemm $DG_DIR: no deep_gemm/jit/compiler.py (a DeepGEMM of the Python-JIT kind, e.g. 55ab91f)"
  DG_CUTLASS=${CUTLASS:-$DG_DIR/third-party/cutlass/include}
  [ -f "$DG_CUTLASS/cute/tensor.hpp" ] || die "DeepGEMM: no CUTLASS headers in $DG_CUTLASS (the third-party/cutlass submodule, or CUTLASS=DIR/include)"
  DG_COMMIT=$(need_commit deepgemm "$DG_DIR") || exit 2
  DG_CUTLASS_COMMIT=$(need_commit deepgemm-cutlass "$DG_CUTLASS/.." "$DG_DIR" third-party/cutlass) || exit 2
fi
if ! skipped flashmla; then
  [ -n "$FM_DIR" ] || die "FlashMLA: pass --flashmla DIR (FlashMLA 9241ae3 with its csrc/cutlass), or --skip flashmla"
  [ -f "$FM_DIR/csrc/api/dense_decode.h" ] || die "--flashmla $FM_DIR: no csrc/api/dense_decode.h (FlashMLA 9241ae3?)"
  [ -f "$FM_DIR/csrc/cutlass/include/cute/tensor.hpp" ] || die "--flashmla $FM_DIR: no csrc/cutlass/include (its cutlass submodule)"
  FM_COMMIT=$(need_commit flashmla "$FM_DIR") || exit 2
  FM_CUTLASS_COMMIT=$(need_commit flashmla-cutlass "$FM_DIR/csrc/cutlass" "$FM_DIR" csrc/cutlass) || exit 2
fi

# ---- what the stages need
missing=""
for tool in nvcc cmake g++ git python3; do command -v $tool > /dev/null || missing+=" $tool"; done
if [ -n "${DBO_JSON_INCLUDE:-}" ]; then
  [ -f "$DBO_JSON_INCLUDE/nlohmann/json.hpp" ] || missing+=" nlohmann/json.hpp (not in DBO_JSON_INCLUDE=$DBO_JSON_INCLUDE)"
elif [ ! -f /usr/include/nlohmann/json.hpp ] && [ ! -f /usr/local/include/nlohmann/json.hpp ]; then
  missing+=" nlohmann-json (nlohmann-json3-dev, or DBO_JSON_INCLUDE=DIR holding nlohmann/json.hpp)"
fi
python3 -c "import torch, triton" 2> /dev/null || missing+=" python3-torch+triton"
[ -z "$missing" ] || die "missing:$missing"

mkdir -p "$OUT/stages" "$OUT/logs" "$OUT/scratch"
export NCCL_NVLS_ENABLE=0 # never NVLink multicast
RAW=$OUT/raw.jsonl
T0=$(date +%s)
n=0

# ---- the stages
st_build() {
  local nccl
  nccl=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null)
  cmake -S kernels -B "$OUT/scratch/build-gpu" ${DBO_JSON_INCLUDE:+-DDBO_JSON_INCLUDE=$DBO_JSON_INCLUDE} \
    ${nccl:+-DNCCL_ROOT=$nccl} && cmake --build "$OUT/scratch/build-gpu" -j"$(nproc)"
}
with_nccl() {
  local nccl
  nccl=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null)
  LD_LIBRARY_PATH=${nccl:+$nccl/lib:}${LD_LIBRARY_PATH:-} "$@"
}
st_suite() { with_nccl "$OUT/scratch/build-gpu/dbosim-calibrate-run" "${QUICK:---full}" --out "$RAW" --git-commit "$DBO_GIT_COMMIT"; }
st_torch() {
  python3 kernels/torch_attention.py "$RAW" $QUICK && python3 kernels/triton_mla_decode.py "$RAW" $QUICK &&
    python3 kernels/torch_serving_kernels.py "$RAW" $QUICK && python3 kernels/torch_mla_bmm.py "$RAW"
}
st_graph_gaps() { python3 kernels/torch_graph_gaps.py "$RAW"; }
st_flashmla() {
  FLASHMLA_SRC=$FM_DIR FLASHMLA_COMMIT=$FM_COMMIT FLASHMLA_CUTLASS_COMMIT=$FM_CUTLASS_COMMIT \
    FLASHMLA_BUILD=$OUT/scratch/flashmla-build python3 kernels/flashmla_decode.py "$RAW" $QUICK
}
deepgemm() { # SCRIPT
  DG_SRC=$DG_DIR CUTLASS=$DG_CUTLASS DG_COMMIT=$DG_COMMIT DG_CUTLASS_COMMIT=$DG_CUTLASS_COMMIT \
    DG_WORK=$OUT/scratch/deepgemm DG_CACHE_DIR=$OUT/scratch/deepgemm-cache DG_SCRIPT=$1 kernels/deepgemm_on_gpu.sh "$RAW" $QUICK
}
st_deepgemm() { deepgemm deepgemm_kernels.py; }
st_deepgemm_sm() { deepgemm deepgemm_sm_scaling.py; }
st_verify() {
  rm -f "$OUT/verify.jsonl" # a fresh pass, never resumed
  "$OUT/scratch/build-gpu/dbosim-calibrate-run" --verify --out "$OUT/verify.jsonl" --git-commit "$DBO_GIT_COMMIT"
}

for s in "${STAGES[@]}"; do
  n=$((n + 1))
  tag="[$n/${#STAGES[@]}] $s"
  if [ -e "$OUT/stages/$s.done" ]; then
    echo "$tag: done earlier ($(cat "$OUT/stages/$s.done") s), skipped"
    continue
  fi
  if skipped "$s"; then
    echo "$tag: skipped (--skip $s): the fit will name it if the profile needs it"
    continue
  fi
  echo "$tag: running (log: $OUT/logs/$s.log; $(($(date +%s) - T0)) s so far)"
  t=$(date +%s)
  "st_$s" > "$OUT/logs/$s.log" 2>&1
  rc=$?
  dt=$(($(date +%s) - t))
  if [ $rc -ne 0 ]; then
    echo "$tag: FAILED (exit $rc after $dt s); the end of $OUT/logs/$s.log:"
    tail -20 "$OUT/logs/$s.log"
    echo "fix it and run the same command again: finished stages are kept"
    exit 1
  fi
  echo "$dt" > "$OUT/stages/$s.done"
  printf '%s\t%s\t%s\n' "$s" "$dt" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$OUT/stages/times.tsv"
  echo "$tag: done in $dt s"
done
echo "all stages done in $(($(date +%s) - T0)) s; records: $(wc -l < "$RAW") in $RAW"
echo "next, on any machine: build-dev/dbosim-calibrate fit $OUT --out NEW.yaml"

#!/bin/bash
# check_identical.sh BEFORE AFTER [WORK]: a refactor's proof that outputs did not change. BEFORE and AFTER are dbosim
# binaries (or build folders holding one). Each runs every shipped scenario (`dbosim run`; `dbosim sweep` for those with
# a sweep: section), every plan (`dbosim plan`) and `dbosim validate --no-testbed`, into WORK/before and WORK/after
# (default: a temporary folder) under the same relative names; then `diff -r` of the two. Exit 0: byte-identical.
# Each command's exit status is compared (NAME.exit); one that runs past DBO_CHECK_TIMEOUT seconds (default 120)
# exits 124 and is named in SIDE/timed_out.txt. The console output (NAME.log) is kept but not compared (progress
# lines carry wall times).
# check_identical.sh --record BIN WORK SIDE: record one side only (say, before the first move);
# check_identical.sh --compare WORK: compare WORK/before with WORK/after.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BEFORE AFTER [WORK] | $0 --record BIN WORK SIDE | $0 --compare WORK" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ "$1" = --record ] || [ "$1" = --compare ]; then
  work=${3:-$2}
else
  work=${3:-$(mktemp -d)}
fi
limit=${DBO_CHECK_TIMEOUT:-120}
binary() { if [ -d "$1" ]; then echo "$(cd "$1" && pwd)/dbosim"; else echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; fi; }

# record BIN SIDE: every output into WORK/SIDE/<name>, run from WORK/SIDE so paths inside outputs are the same.
record() {
  local bin=$1 side=$work/$2
  rm -rf "$side" && mkdir -p "$side" && cd "$side" || exit 2
  local s name
  for s in "$repo"/scenarios/*.yaml; do
    name=$(basename "$s" .yaml)
    if grep -q '^sweep:' "$s"; then
      run_one "$name" "$bin" sweep "$s" -j 2 --out "$name"
    else
      run_one "$name" "$bin" run "$s" --out "$name"
    fi
  done
  for s in "$repo"/plans/*.yaml; do
    name=plan_$(basename "$s" .yaml)
    run_one "$name" "$bin" plan "$s" -j 2 --out "$name"
  done
  run_one validate "$bin" validate --no-testbed --out validate
}
run_one() {
  local name=$1
  shift
  local t0=$SECONDS rc=0
  timeout "$limit" "$@" >"$name.log" 2>&1 || rc=$?
  echo "$rc" >"$name.exit" # compared too: validate exits non-zero when cases exceed their tolerance
  [ $rc -eq 124 ] && echo "$name: ran past ${limit} s (skipped)" | tee -a timed_out.txt
  echo "$name $((SECONDS - t0)) s" >>times.txt
}

if [ "$1" = --record ]; then
  record "$(binary "$2")" "$4"
  exit 0
fi
# compare: every file byte for byte, except the children's log.txt, whose "serving run: N s wall" line is a wall time.
compare() {
  cd "$work" || exit 2
  echo "outputs in $work"
  local rc=0 f
  diff -r before after --exclude=times.txt --exclude='*.log' --exclude=log.txt || rc=1
  while IFS= read -r f; do
    diff <(grep -v ' s wall$' "before/$f") <(grep -v ' s wall$' "after/$f") >/dev/null || {
      echo "differs: $f"
      rc=1
    }
  done < <(cd before && find . -name log.txt)
  [ $rc -eq 0 ] && echo "byte-identical (log.txt: but for wall times)"
  return $rc
}
if [ "$1" = --compare ]; then
  work=$2
  compare
  exit
fi
record "$(binary "$1")" before
record "$(binary "$2")" after
compare

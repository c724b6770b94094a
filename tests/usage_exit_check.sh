#!/usr/bin/env bash
# Every binary's usage errors exit 2 with a message on stderr (a bad flag, a missing argument, an unknown
# subcommand), and its --help exits 0: dbosim-calibrate and the GPU scripts the README names (calibrate/run_on_gpu.sh
# and the kernels/deepgemm_on_gpu.sh it runs); their argument checks run before anything needs a GPU. dbosim's own
# are tests/abuse/usage_*.yaml. Usage: usage_exit_check.sh DBOSIM_CALIBRATE SOURCE_DIR
set -u
calibrate=$1 src=$2
fail=0
# expect CODE WORDS -- COMMAND...: COMMAND exits CODE and its stderr holds WORDS (for CODE 2).
expect() {
  local code=$1 words=$2
  shift 3
  local err rc
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != "$code" ]; then
    echo "usage_exit_check: '$*' exited $rc, expected $code: $err"; fail=1
  elif [ "$code" = 2 ] && [[ "$err" != *"$words"* ]]; then
    echo "usage_exit_check: '$*' said '$err', expected it to say '$words'"; fail=1
  fi
}
expect 0 "" -- "$calibrate" --help
expect 2 "'nosuchverb' is no subcommand (valid: fit, report, refit, derive, diff)" -- "$calibrate" nosuchverb
expect 2 "'--bogus' is no subcommand" -- "$calibrate" --bogus
expect 2 "A subcommand is required" -- "$calibrate"
expect 2 "The following argument was not expected: --bogus" -- "$calibrate" fit --out x.yaml --bogus
expect 2 "--raw: 1 required" -- "$calibrate" report --raw
expect 2 "--out is required" -- "$calibrate" fit
expect 2 "profile is required" -- "$calibrate" refit
expect 2 "is not a factor >= 1" -- "$calibrate" diff h200 b200 --max-step-ratio 0.5

gpu=$src/calibrate/run_on_gpu.sh
expect 0 "" -- "$gpu" --help
expect 2 "usage: calibrate/run_on_gpu.sh OUT" -- "$gpu"
expect 2 "unknown option '--bogus'" -- "$gpu" out --bogus
expect 2 "--deepgemm needs a value" -- "$gpu" out --deepgemm
expect 2 "--flashmla needs a value" -- "$gpu" out --flashmla --quick
expect 2 "--commit needs a value" -- "$gpu" out --commit
expect 2 "--skip nope: unknown stage" -- "$gpu" out --skip nope

dg=$src/kernels/deepgemm_on_gpu.sh
expect 0 "" -- "$dg" --help
expect 2 "set DG_SRC" -- env -u DG_SRC "$dg" raw.jsonl
expect 2 "usage: DG_SRC=DIR" -- env DG_SRC=x DG_COMMIT=a DG_CUTLASS_COMMIT=b "$dg"
expect 2 "unknown option '--bogus'" -- env DG_SRC=x DG_COMMIT=a DG_CUTLASS_COMMIT=b "$dg" raw.jsonl --bogus
expect 2 "--jobs needs a count" -- env DG_SRC=x DG_COMMIT=a DG_CUTLASS_COMMIT=b "$dg" raw.jsonl --jobs
exit $fail

#!/usr/bin/env bash
# The CLI contract on one shipped input: every verb and flag of dbosim exits 0, or exits 2 with the documented message
# (never 1, never a signal). Usage: cli_matrix.sh DBOSIM SCHEMA_CHECK SCHEMA INPUT OUTDIR, INPUT one of
#   a scenario (scenarios/*.yaml) — one-step: run --compare, run --explain OP (every op), run --schedule NAME (every
#     registered schedule: exit 0 with that schedule, or 2 "needs N micro-batch(es)"), sweep (2: no sweep: section),
#     plan (2: no plan: section); each summary.json written (and each --compare entry) checked against SCHEMA. A
#     cluster scenario (drawn routing: every rank simulated, seconds a run) runs --explain A0 only, with each
#     --schedule run (the cost report is the single-rank code), and not its default schedule again (--compare ran it). Serving: run
#     --compare / --explain / --schedule refused (2), sweep run to the end when it has a sweep: section (then
#     --resume), else 2, and else run twice over one --step-cache (the same summary.json); plan 2. (The plain `run` of every scenario is the scenario:NAME test.)
#   a plan (plans/*.yaml) — run, run --compare, sweep: 2, "this is a plan file". (`plan` is the plan:NAME test.)
#   "global" — models, hw, schedules, run --help-params, validate --no-e2e (0, or 3 when a case exceeds its
#     tolerance, as validate/README.md documents; the gate against validate/baseline.yaml must pass), validate --bench-result on
#     the synthetic vLLM result (bench_result.json written), bad usage (2).
set -u
dbosim=$1 check=$2 schema=$3 input=$4 out=$5
rm -rf "$out"
mkdir -p "$out"
fails=0 runs=0
n=0

log_of() { printf '%s/%02d.log' "$out" "$1"; }

# expect CODES PATTERN ARGS...: dbosim ARGS exits with one of CODES (space-separated); on exit 2 its stderr matches
# PATTERN (grep -E); sets last_rc. Its stdout in $out/NN.log, its stderr in $out/NN.log.err.
expect()
{
  local codes=$1 pattern=$2
  shift 2
  n=$((n + 1))
  runs=$((runs + 1))
  local log
  log=$(log_of $n)
  "$dbosim" "$@" >"$log" 2>"$log.err"
  local rc=$?
  last_rc=$rc
  if [[ " $codes " != *" $rc "* ]]; then
    echo "FAIL: dbosim $* exited $rc (expected ${codes// /|})"
    tail -n 5 "$log" "$log.err"
    fails=$((fails + 1))
    return 1
  fi
  if [ "$rc" = 2 ] && ! grep -Eq -- "$pattern" "$log.err"; then
    echo "FAIL: dbosim $* exited 2 without the documented message /$pattern/:"
    cat "$log.err"
    fails=$((fails + 1))
    return 1
  fi
  echo "ok ($rc): dbosim $*"
  return 0
}

# schema_ok DIR: DIR/summary.json (and DIR/compare/*/summary.json, against $defs/step) conform to SCHEMA.
schema_ok()
{
  local dir=$1
  if ! "$check" "$schema" "$dir/summary.json"; then
    echo "FAIL: $dir/summary.json does not conform to $(basename "$schema")"
    fails=$((fails + 1))
  fi
  for entry in "$dir"/compare/*/summary.json; do
    [ -e "$entry" ] || continue
    if ! "$check" "$schema" --def step "$entry"; then
      echo "FAIL: $entry does not conform to $(basename "$schema") \$defs/step"
      fails=$((fails + 1))
    fi
  done
}

finish()
{
  echo "$runs dbosim runs, $fails failure(s)"
  [ "$fails" = 0 ]
  exit $?
}

one_step_only='appl(y|ies) to one-step scenarios; this one is a serving run'
schedules=$("$dbosim" schedules | awk 'NR > 1 { print $1 }')
[ -n "$schedules" ] || { echo "FAIL: dbosim schedules listed nothing"; exit 1; }

if [ "$input" = global ]; then
  for verb in models hw schedules backends engines; do # a header and at least one row
    if expect 0 '' $verb && [ "$(wc -l <"$(log_of $n)")" -lt 2 ]; then
      echo "FAIL: dbosim $verb listed nothing"
      fails=$((fails + 1))
    fi
  done
  expect 0 '' --help
  expect 0 '' run --help-params
  expect 2 'a scenario file is required' run
  expect 2 'required|not expected|Run with --help' sweep
  expect 2 'required|not expected|Run with --help' plan
  expect 2 'not expected|Run with --help' no_such_verb
  expect 2 'explain' run scenarios/default.yaml --explain NOT_AN_OP --out "$out/bad_explain"
  expect 2 "unknown schedule 'no_such_schedule'" run scenarios/default.yaml --schedule no_such_schedule \
    --out "$out/bad_schedule"
  ext=validate/testbed/external/decode_t256_c20__dbo
  expect 0 '' validate --testbed-ops "$ext.yaml" --recording "$ext.csv" --out "$out/external"
  expect 2 'requires --recording' validate --testbed-ops "$ext.yaml" --out "$out/external_norec"
  expect 2 'the recording has no event of this op' validate --testbed-ops "$ext.yaml" \
    --recording validate/testbed/decode_t256_c20__dbo.json --out "$out/external_badrec"
  bench=tests/data/bench_result/vllm_dsr1_gb300_c1.json
  if expect 0 '' validate --bench-result "$bench" --scenario scenarios/dsv3_serving_ep8_gb300_async_combine.yaml \
    --out "$out/bench_result"; then
    [ -s "$out/bench_result/bench_result.json" ] ||
      { echo "FAIL: validate --bench-result wrote no bench_result.json"; fails=$((fails + 1)); }
  fi
  expect 2 'requires --scenario' validate --bench-result "$bench" --out "$out/bench_noscenario"
  expect 2 "unknown format 'trt'" validate --bench-result "$bench" --bench-format trt \
    --scenario scenarios/dsv3_serving_ep8_gb300_async_combine.yaml --out "$out/bench_badformat"
  # the e2e group (a `dbosim run` child per case, most of validate's time) is gated by the [slow] test
  # "validate e2e: the shipped group holds its recorded MAPE"; here the verb with every other group
  if expect "0 3" '' validate --baseline validate/baseline.yaml --no-e2e --out "$out/validate"; then
    grep -q '^gate: ok' "$(log_of $n)" || { echo "FAIL: validate's gate did not pass"; fails=$((fails + 1)); }
  fi
  finish
fi

[ -f "$input" ] || { echo "FAIL: no such input $input"; exit 1; }
name=$(basename "$input" .yaml)

if grep -q '^plan:' "$input"; then
  plan_file='this is a plan file .* run it with .dbosim plan FILE.'
  expect 2 "$plan_file" run "$input" --out "$out/run"
  expect 2 "$plan_file" run "$input" --compare --out "$out/compare"
  expect 2 "$plan_file" sweep "$input" --out "$out/sweep"
  finish
fi

expect "0 2" "$one_step_only" run "$input" --compare --out "$out/compare" || finish
if [ "$last_rc" = 2 ]; then # a serving scenario
  expect 2 "$one_step_only" run "$input" --explain A0 --out "$out/explain"
  for s in $schedules; do
    expect 2 "$one_step_only" run "$input" --schedule "$s" --out "$out/schedule_$s"
  done
  if grep -q '^sweep:' "$input"; then
    expect 0 '' sweep "$input" --out "$out/sweep" && expect 0 '' sweep "$input" --resume --out "$out/sweep"
  else
    expect 2 'has no sweep: section' sweep "$input" --out "$out/sweep"
  fi
  expect 2 'a plan file needs a plan: section' plan "$input" --out "$out/plan"
  # The on-disk step cache: a run over what an earlier run left simulates nothing and writes the same summary.json;
  # a folder that cannot be made is exit 2.
  if ! grep -q '^sweep:' "$input" &&
    expect 0 '' run "$input" --step-cache "$out/steps" --out "$out/steps_cold" &&
    expect 0 '' run "$input" --step-cache "$out/steps" --out "$out/steps_warm" &&
    ! cmp -s "$out/steps_cold/summary.json" "$out/steps_warm/summary.json"; then
    echo "FAIL: run --step-cache: the second run's summary.json differs from the first's"
    fails=$((fails + 1))
  fi
  expect 2 'cannot create the step cache folder' run "$input" --step-cache /dev/null/steps --out "$out/steps_bad"
  finish
fi

schema_ok "$out/compare"
ops="A0 A1 D MLP S C STEP"
cluster=0
grep -q '"cluster"' "$out/compare/summary.json" && cluster=1
default=$(grep -m1 '"schedule":' "$out/compare/summary.json" | sed 's/.*: "\(.*\)".*/\1/')
# explained TAG LOG: LOG holds --explain TAG's explanation.
explained()
{
  grep -Eq "^(MoE layer|dense layer|outside the layers:) $1 = |op $1 does not occur" "$2" && return 0
  echo "FAIL: --explain $1 printed no explanation"
  fails=$((fails + 1))
}
if [ "$cluster" = 1 ]; then
  # Every rank simulated: seconds a run. The cost report behind --explain is the single-rank code: A0 only, given
  # with each --schedule run below; the default schedule already ran in --compare.
  ops=""
fi
for op in $ops; do
  if expect 0 '' run "$input" --explain "$op" --out "$out/explain_$op"; then
    explained "$op" "$(log_of $n)"
    schema_ok "$out/explain_$op"
  fi
done
for s in $schedules; do
  extra=()
  if [ "$cluster" = 1 ]; then
    [ "$s" = "$default" ] && { echo "covered: --schedule $s is the default, run by --compare"; continue; }
    extra=(--explain A0)
  fi
  expect "0 2" 'needs [0-9]+ micro-batch' run "$input" --schedule "$s" "${extra[@]}" --out "$out/schedule_$s" ||
    continue
  [ "$last_rc" = 0 ] || continue
  schema_ok "$out/schedule_$s"
  [ "$cluster" = 1 ] && explained A0 "$(log_of $n)" && ops=A0
  grep -m1 '"schedule":' "$out/schedule_$s/summary.json" | grep -q "\"$s\"" ||
    { echo "FAIL: --schedule $s ran another schedule"; fails=$((fails + 1)); }
done
if [ -z "$ops" ] && expect 0 '' run "$input" --explain A0 --out "$out/explain_A0"; then # no other schedule ran
  explained A0 "$(log_of $n)" && ops=A0
  schema_ok "$out/explain_A0"
fi
expect 2 'has no sweep: section' sweep "$input" --out "$out/sweep"
expect 2 'a plan file needs a plan: section' plan "$input" --out "$out/plan"
echo "$name: one-step scenario (default schedule $default), explained: $ops"
finish

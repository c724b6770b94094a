#!/usr/bin/env bash
# Runs one fuzz target for a bounded time from the shipped files as seeds, then replays every regression
# input in fuzz/regressions/<target>/. The random seed is fixed (FUZZ_SEED, default 1) so the suite is repeatable;
# scripts/fuzz.sh runs long with fresh seeds. Usage: run_brief.sh TARGET CORPUS_DIR SECONDS SEED_DIR...
set -euo pipefail
target=$1 corpus=$2 seconds=$3
shift 3
name=$(basename "$target"); name=${name#fuzz_}
regressions="$(dirname "$0")/regressions/$name"
mkdir -p "$corpus"
if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
  "$target" -runs=0 "$regressions"/*
fi
log=$(mktemp)
status=0
"$target" -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  "$corpus" "$@" >"$log" 2>&1 || status=$?
grep -E "^stat::(number_of_executed_units|new_units_added)" "$log" || true
if [ "$status" -ne 0 ]; then tail -60 "$log"; fi
rm -f "$log"
exit "$status"

#!/usr/bin/env bash
# One shipped scenario under the sanitizers: `dbosim run` of a copy whose serving workload is cut to at most
# MAX_PROMPTS requests (a `num_prompts:` line above it is lowered; nothing else changes), so that the serving
# loop, the step cache and the metrics run under ASan+UBSan at a fraction of the full run's time. The Release
# build runs every scenario whole (cli:scenarios/NAME). Usage: scenario_brief.sh DBOSIM SCENARIO OUTDIR MAX_PROMPTS
set -euo pipefail
dbosim=$1 scenario=$2 out=$3 max_prompts=$4
mkdir -p "$out"
brief="$out/$(basename "$scenario")"
awk -v cap="$max_prompts" '
  match($0, /^[[:space:]]*num_prompts:[[:space:]]*[0-9]+[[:space:]]*$/) {
    split($0, kv, ":"); n = kv[2] + 0
    if (n > cap) { sub(/[0-9]+[[:space:]]*$/, cap) }
  }
  { print }' "$scenario" >"$brief"
exec "$dbosim" run "$brief" --out "$out/run"

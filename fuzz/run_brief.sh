#!/usr/bin/env bash
# The test suite's fuzz check of one target: runs every input of fuzz/regressions/<target>/, of the committed corpus
# fuzz/corpus/<target>/ and of the shipped seed files once, and nothing else. The same inputs on every run and every
# machine, so a failure is a real regression, never the luck of a run: libFuzzer's own mutation, even with a fixed
# seed and a fixed input count, drifts with the machine's load (docs/fuzzing.md). scripts/fuzz.sh runs the targets
# long and grows the corpus. Usage: run_brief.sh TARGET SEED_DIR...
set -euo pipefail
target=$1
shift
name=$(basename "$target"); name=${name#fuzz_}
inputs=()
for dir in "$(dirname "$0")/regressions/$name" "$(dirname "$0")/corpus/$name" "$@"; do
  if [ -d "$dir" ]; then
    while IFS= read -r -d '' f; do inputs+=("$f"); done < <(find "$dir" -type f -print0 | LC_ALL=C sort -z)
  elif [ -e "$dir" ]; then
    inputs+=("$dir")
  fi
done
echo "inputs: ${#inputs[@]} (digest $(cat "${inputs[@]}" | sha256sum | cut -c1-16))"
# Each input once (-runs=0 runs the given files and stops); -timeout bounds one input (a hang is a finding). The
# target's temp files go to a folder of its own, which must be empty when it exits (it removes what it wrote).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
TMPDIR=$scratch "$target" -runs=0 -timeout=60 -rss_limit_mb=2048 "${inputs[@]}"
left=$(ls -A "$scratch")
if [ -n "$left" ]; then
  echo "run_brief.sh: $name left in its temp folder: $left" >&2
  exit 1
fi

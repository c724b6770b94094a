#!/usr/bin/env bash
# Large-EP steps at the documented bounds (docs/results.md, "Speed"), timed on this machine (wall and CPU seconds,
# peak RSS from /usr/bin/time):
#   bench/scale/run.sh [BUILD_DIR]        (default: build)
# 1. EP 16,384 and EP 65,536 (the top of parallel.ep's range) DBO decode steps under balanced routing: O(ep);
# 2. EP 4,096 and EP 16,384 (the top of drawn routing's bound) under drawn Zipf routing with EPLB: every token drawn
#    and every rank priced from sparse rows, O(ep x tokens per rank);
# 3. EP 32,768 under drawn routing: refused with exit 2, naming parallel.ep and the bound.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$here/build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
run() { # label, command...
  local label="$1"
  shift
  /usr/bin/time -f "$label: %e s wall, %U s user CPU, %M KB peak RSS" "$@" > "$out/log.txt" 2> "$out/time.txt" || {
    cat "$out/log.txt" "$out/time.txt"
    exit 1
  }
  echo "$(tail -n 1 "$out/time.txt"); $(grep -m1 '^step time' "$out/log.txt" | tr -s ' ')"
}
for s in ep16384_balanced ep65536_balanced ep4096_zipf ep16384_zipf; do
  run "$s" "$build/dbosim" run "$here/bench/scale/$s.yaml" --out "$out/$s"
done
sed 's/nodes: 2048/nodes: 4096/; s/16128/32512/; s/16384/32768/g' "$here/bench/scale/ep16384_zipf.yaml" > "$out/ep32768_zipf.yaml"
rc=0
"$build/dbosim" run "$out/ep32768_zipf.yaml" --out "$out/ep32768" > /dev/null 2> "$out/err.txt" || rc=$?
[ "$rc" = 2 ] || { echo "ep32768_zipf: exit $rc, expected 2"; cat "$out/err.txt"; exit 1; }
echo "ep32768_zipf: exit 2 ($(grep -o 'parallel.ep: ep 32768[^:]*' "$out/err.txt"))"

#!/usr/bin/env bash
# Large-EP steps at the documented bounds (docs/results.md, "Speed"), timed on this machine (wall and CPU seconds,
# peak RSS from /usr/bin/time):
#   bench/scale/run.sh [BUILD_DIR]        (default: build)
# 1. EP 16,384 and EP 65,536 (the top of parallel.ep's range) DBO decode steps under balanced routing: O(ep);
# 2. EP 4,096 under drawn Zipf routing (the top of drawn routing's bound): every rank priced, O(ep^2);
# 3. EP 8,192 under drawn routing: refused with exit 2, naming parallel.ep and the bound.
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
for s in ep16384_balanced ep65536_balanced ep4096_zipf; do
  run "$s" "$build/dbosim" run "$here/bench/scale/$s.yaml" --out "$out/$s"
done
sed 's/nodes: 512/nodes: 1024/; s/3840/7936/; s/4096/8192/g' "$here/bench/scale/ep4096_zipf.yaml" > "$out/ep8192_zipf.yaml"
rc=0
"$build/dbosim" run "$out/ep8192_zipf.yaml" --out "$out/ep8192" > /dev/null 2> "$out/err.txt" || rc=$?
[ "$rc" = 2 ] || { echo "ep8192_zipf: exit $rc, expected 2"; cat "$out/err.txt"; exit 1; }
echo "ep8192_zipf: exit 2 ($(grep -o 'parallel.ep: ep 8192[^:]*' "$out/err.txt"))"

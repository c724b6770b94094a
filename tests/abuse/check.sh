#!/usr/bin/env bash
# One abusive-input case: runs `dbosim run CASE` and checks the exit code and the exact stderr given in the
# case's header (`# expect-exit: N`, `# expect-stderr: ...`; @DIR@ = the case's folder), and that no output
# file was written. Usage: check.sh DBOSIM CASE OUTDIR
set -u
dbosim=$1 case=$2 out=$3
dir=$(cd "$(dirname "$case")" && pwd)
case="$dir/$(basename "$case")"
expect_exit=$(sed -n 's/^# expect-exit: //p' "$case")
expect_err=$(sed -n 's/^# expect-stderr: //p' "$case" | sed "s|@DIR@|$dir|g")
[ -n "$expect_exit" ] || { echo "case has no '# expect-exit:' line"; exit 1; }
rm -rf "$out"
stderr=$("$dbosim" run "$case" --out "$out" 2>&1 >/dev/null)
rc=$?
status=0
if [ "$rc" != "$expect_exit" ]; then
  echo "exit code $rc, expected $expect_exit"; status=1
fi
if [ "$stderr" != "$expect_err" ]; then
  echo "stderr differs:"; diff <(printf '%s\n' "$expect_err") <(printf '%s\n' "$stderr"); status=1
fi
if [ "$expect_exit" != 0 ] && [ -e "$out/summary.json" ]; then
  echo "summary.json was written for a rejected input"; status=1
fi
exit $status

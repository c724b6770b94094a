#!/usr/bin/env bash
# One abusive-input case: runs `dbosim run CASE --out OUTDIR` (or the case's `# args:` line, where {case} is the
# case file, {dir} its folder and {out} OUTDIR) and checks the exit code and the exact stderr given in the case's
# header (`# expect-exit: N`, `# expect-stderr: ...`, repeatable for several lines; @DIR@ = the case's folder), and
# that no summary was written for a rejected input. A list of valid names is never typed in a case: @SCHEDULES@,
# @BACKENDS@, @ENGINES@, @MODELS@ and @PROFILES@ stand for the registry's rows as the binary lists them (`dbosim
# schedules`, `backends`, `engines`, `models`, `hw`), joined by ", ". Usage: check.sh DBOSIM CASE OUTDIR
set -u
dbosim=$1 case=$2 out=$3
dir=$(cd "$(dirname "$case")" && pwd)
case="$dir/$(basename "$case")"
expect_exit=$(sed -n 's/^# expect-exit: //p' "$case")
expect_err=$(sed -n 's/^# expect-stderr: //p' "$case" | sed "s|@DIR@|$dir|g; s|@OUT@|$out|g")
# rows VERB: the first column of `dbosim VERB` below its header, up to the table's first blank line, joined by ", ".
rows() { "$dbosim" "$1" | awk 'NR > 1 && NF == 0 { exit } NR > 1 { printf "%s%s", (n++ ? ", " : ""), $1 }'; }
# engines: each bare name (its first row's id before '@'), then every row's id: what `engine:` accepts.
engine_values() {
  "$dbosim" engines | awk 'NR > 1 && NF == 0 { exit } NR > 1 {
    split($1, id, "@"); if (id[1] != last) { printf "%s%s", (n++ ? ", " : ""), id[1]; last = id[1] }
    printf ", %s", $1 }'
}
for list in SCHEDULES:schedules BACKENDS:backends MODELS:models PROFILES:hw; do
  case $expect_err in *"@${list%%:*}@"*) expect_err=${expect_err//@${list%%:*}@/$(rows "${list#*:}")} ;; esac
done
case $expect_err in *@ENGINES@*) expect_err=${expect_err//@ENGINES@/$(engine_values)} ;; esac
args=$(sed -n 's/^# args: //p' "$case")
[ -n "$expect_exit" ] || { echo "case has no '# expect-exit:' line"; exit 1; }
[ -n "$args" ] || args='run {case} --out {out}'
rm -rf "$out"
mkdir -p "$(dirname "$out")"
# The args line is split on blanks; '' stands for an empty argument.
argv=()
set -f
for word in $args; do
  word=${word//\{case\}/$case}
  word=${word//\{dir\}/$dir}
  word=${word//\{out\}/$out}
  [ "$word" = "''" ] && word=""
  argv+=("$word")
done
set +f
stderr=$("$dbosim" "${argv[@]}" 2>&1 >/dev/null)
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
if [ -d "$out" ] && [ -n "$(find "$out" -name '*.tmp.*' -print -quit)" ]; then
  echo "a temp file was left behind under $out"; status=1
fi
exit $status

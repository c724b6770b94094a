#!/usr/bin/env bash
# Every tracked text file outside docs/ must stand on its own: no citation of the old out-of-tree domain notes (the
# code cites docs/domain.md), no machine path, no folder beside the checkout, and no pointer into a tracker or notes
# kept outside the repository (an issue number, the notes of a working session, a numbered seed): a comment says
# what the code does and why, and the history lives in commit messages. An upstream issue is cited as owner/repo#N.
# Fails listing each offending line.
# Skipped (exit 77) outside a git work tree. Usage: no_outside_refs.sh SOURCE_DIR
set -u
src=$1

# The forbidden texts, as extended regexes; the brackets keep this file from matching itself.
patterns=(
  'DOMAIN[.]md'   # the domain notes outside the repository; cite docs/domain.md
  '/wor[k]/'      # a machine path
  '[.][.]/shared' # the folder beside the checkout
  '(^|[^A-Za-z])[Ii]ssues? #?[0-9]+' # an issue of the project's tracker, by number
  '[Ss]ession[ -]notes?'             # notes of a working session
  '[Ss]eed[- ]0+[0-9]'               # a seed of the tracker, by its zero-padded number
)
# Files not searched: docs/ (it may name what it replaced), raw calibration records (measured output as recorded).
# Binary files (fuzz regressions) are skipped by -I.
excluded=(':!docs/' ':!tests/data/calib/*.jsonl')

if ! git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "not a git work tree: $src (skipped)"
  exit 77
fi
args=()
for p in "${patterns[@]}"; do
  args+=(-e "$p")
done
hits=$(git -C "$src" grep -I -n -E "${args[@]}" -- . "${excluded[@]}")
rc=$? # git grep: 0 found, 1 none, else an error
# Fuzz inputs may hold binary bytes (-I would skip them): searched as text, they carry no machine path either.
if [ $rc -eq 1 ]; then
  hits=$(git -C "$src" grep -a -n -E "${args[@]}" -- fuzz/regressions fuzz/seeds fuzz/corpus)
  rc=$?
  hits=$(cut -c1-200 <<<"$hits")
fi
if [ $rc -eq 0 ]; then
  echo "tracked files name something outside the repository:"
  echo "$hits"
  exit 1
elif [ $rc -ne 1 ]; then
  echo "git grep failed ($rc)"
  exit 1
fi
echo "no tracked file outside docs/ matches: ${patterns[*]}"

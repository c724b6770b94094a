#!/usr/bin/env bash
# Every tracked C++/CUDA source is clang-format clean (the repository's .clang-format). Usage: clang_format_check.sh SRC
set -uo pipefail
cd "$1" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 77 # not a checkout: nothing to list
command -v clang-format >/dev/null || { echo "clang-format not found (scripts/setup.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.h')
((${#files[@]})) || { echo "no sources listed"; exit 1; }
# One clang-format process for every file (a process per file was a minute of start-ups); a file that is not clean
# is named from its diagnostics ("FILE:LINE:COL: error: ...").
if report=$(clang-format --dry-run -Werror "${files[@]}" 2>&1); then
  exit 0
fi
printf '%s\n' "$report" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/not clang-format clean: \1/p' | sort -u
printf '%s\n' "$report" | grep -q ': error: ' || printf '%s\n' "$report"
exit 1

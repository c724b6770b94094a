#!/usr/bin/env bash
# Every tracked C++/CUDA source is clang-format clean (the repository's .clang-format). Usage: clang_format_check.sh SRC
set -uo pipefail
cd "$1" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 77 # not a checkout: nothing to list
command -v clang-format >/dev/null || { echo "clang-format not found (scripts/setup.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.h')
((${#files[@]})) || { echo "no sources listed"; exit 1; }
bad=0
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "not clang-format clean: $f"; bad=1; }
done
exit $bad

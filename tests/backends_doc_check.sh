#!/bin/sh
# docs/all2all_backends.md shows `dbosim backends` verbatim between its two marker lines: the docs' list of the
# all-to-all backends is the table's (models/All2AllTable.hpp). Usage: backends_doc_check.sh DBOSIM DOC
dbosim=$1
doc=$2
expected=$("$dbosim" backends) || { echo "FAIL: dbosim backends exited $?"; exit 1; }
shown=$(sed -n '/^<!-- dbosim backends: begin -->$/,/^<!-- dbosim backends: end -->$/p' "$doc" | sed '1,2d;$d' | sed '$d')
if [ "$expected" != "$shown" ]; then
  echo "FAIL: $doc does not show the output of \`dbosim backends\`; paste it between the markers:"
  echo "$expected"
  exit 1
fi
echo "ok: $doc shows the $(echo "$expected" | wc -l) lines of dbosim backends"

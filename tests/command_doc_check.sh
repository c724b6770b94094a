#!/bin/sh
# A docs page shows the output of `dbosim VERB` verbatim between its marker lines `<!-- dbosim VERB: begin -->` and
# `<!-- dbosim VERB: end -->` (inside a code fence): the page's list is the registry's, never typed by hand.
# Usage: command_doc_check.sh DBOSIM VERB DOC
dbosim=$1
verb=$2
doc=$3
expected=$("$dbosim" "$verb") || { echo "FAIL: dbosim $verb exited $?"; exit 1; }
shown=$(sed -n "/^<!-- dbosim $verb: begin -->\$/,/^<!-- dbosim $verb: end -->\$/p" "$doc" | sed '1,2d;$d' | sed '$d')
if [ "$expected" != "$shown" ]; then
  echo "FAIL: $doc does not show the output of \`dbosim $verb\`; paste it between the markers:"
  echo "$expected"
  exit 1
fi
echo "ok: $doc shows the $(echo "$expected" | wc -l) lines of dbosim $verb"

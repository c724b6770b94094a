#!/usr/bin/env bash
# Checks a plan report in headless Chromium: the page renders (DOM dumped after load), every plot figure holds a
# drawn SVG, the browser logged no console error, no path of this checkout appears, and the recommended point's launch
# sets every swept key. Writes a screenshot next to the logs.
# usage: plan_report_check.sh REPORT.html WORKDIR      exit 0: ok; 1: a check failed (said on stderr)
set -u
html=$(realpath "$1"); work=$2
mkdir -p "$work"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "plan_report_check: no chromium (scripts/setup.sh installs it)" >&2; exit 1; }
flags=(--headless --disable-gpu --no-sandbox --enable-logging=stderr --v=0 --user-data-dir="$work/profile")
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$html" > "$work/dom.html" 2> "$work/console.log"
timeout 120 "$browser" "${flags[@]}" --window-size=1280,3000 --screenshot="$work/report.png" "file://$html" \
  > /dev/null 2>> "$work/console.log"
fail=0
grep -q "</html>" "$work/dom.html" || { echo "plan_report_check: no DOM dumped" >&2; fail=1; }
for id in plot-frontier plot-itl plot-ttft plot-timeline; do
  # The figure's markup from its id to its caption: it must hold an <svg> with drawn paths.
  paths=$(awk -v id="id=\"$id\"" 'index($0, id) {on=1} on {n += gsub(/<path/, "")} on && /<\/figure>/ {exit} END {print n+0}' \
    "$work/dom.html")
  if ! awk -v id="id=\"$id\"" 'index($0, id) {on=1} on && /<svg/ {found=1} on && /<\/figure>/ {exit} END {exit !found}' \
    "$work/dom.html" || [ "$paths" -lt 3 ]; then
    echo "plan_report_check: figure $id has no drawn SVG ($paths paths)" >&2; fail=1
  fi
done
grep -q 'id="recommendation"' "$work/dom.html" || { echo "plan_report_check: no recommendation" >&2; fail=1; }
# No machine path: the report is shared; the checkout's folder (the one this script lives in) must not appear.
checkout=$(cd "$(dirname "$0")/.." && pwd)
! grep -qF "$checkout/" "$html" || { echo "plan_report_check: the report names the checkout's path $checkout" >&2; fail=1; }
# The recommended point is one its engine can be launched to run: its launch has no "not a ... flag: KEY" line for a
# KEY the plan sweeps (a column of the points table, id="points").
swept=$(grep -o '<table id="points"><thead><tr>.*</tr></thead>' "$html" | grep -o '<th>[^<]*</th>' | sed 's/<[^>]*>//g')
for key in $(awk '/<pre id="launch">/ {on=1} on {print} /<\/pre>/ {on=0}' "$html" |
  sed -n 's/.*# not a [^:]* flag: \([^ ]*\).*/\1/p'); do
  if printf '%s\n' "$swept" | grep -qxF "$key"; then
    echo "plan_report_check: the recommended point's launch says the swept key $key is not a flag" >&2; fail=1
  fi
done
# Console messages and page errors: Chromium logs them as ":CONSOLE(line)" or "Uncaught".
if grep -E ':CONSOLE|Uncaught|ERROR:.*(javascript|Refused|net::ERR_FILE)' "$work/console.log" | grep -viE 'dbus|gcm|sandbox' \
  > "$work/console_errors.txt"; then
  echo "plan_report_check: console errors:" >&2; cat "$work/console_errors.txt" >&2; fail=1
fi
[ -s "$work/report.png" ] || { echo "plan_report_check: no screenshot" >&2; fail=1; }
exit $fail

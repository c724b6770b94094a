#!/usr/bin/env bash
# The folders' include rules (each folder's README.md), checked by grepping the sources on disk:
#   base/ includes nothing of the project outside base/; hw/ nothing outside hw/;
#   nothing under base/, hw/, models/ or config/ includes sim/; models/ includes nothing of config/ (no loader);
#   <simgrid/...> is included only under sim/engine/ (tests/ exempt: the platform test drives SimGrid itself).
# Fails listing each offending line. Usage: include_rules.sh SOURCE_DIR
set -u
src=$1
cd "$src" || exit 2
project='(base|hw|models|config|sim|serving|validate|calibrate|cli|plan|kernels|bench|fuzz|tests)/'
failed=0

# rule NAME FOLDERS... -- ERE: every #include line under FOLDERS that matches ERE breaks the rule NAME.
rule() {
  local name=$1
  shift
  local dirs=()
  while [ "$1" != -- ]; do
    dirs+=("$1")
    shift
  done
  local ere=$2 hits
  hits=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cu' --include='*.cuh' \
    "^[[:space:]]*#[[:space:]]*include[[:space:]]*${ere}" "${dirs[@]}")
  if [ -n "$hits" ]; then
    echo "broken include rule: $name"
    echo "$hits"
    failed=1
  fi
}

rule "base/ includes nothing of the project outside base/" base -- "\"$(echo "$project" | sed 's/base|//')"
rule "hw/ includes nothing of the project outside hw/" hw -- "\"$(echo "$project" | sed 's/|hw//')"
rule "base/, hw/, models/, config/ include no sim/" base hw models config -- '"sim/'
rule "models/ includes no config/ (no loader)" models -- '"config/'
others=$(ls -d */ | grep -vE '^(sim|tests|build[^/]*)/$')
# shellcheck disable=SC2086
rule "<simgrid/...> only under sim/engine/" $others sim/plan sim/schedules sim/output -- '<simgrid/'
# And nothing directly in sim/ (its code lives in the rooms).
loose=$(find sim -maxdepth 1 \( -name '*.cpp' -o -name '*.hpp' \))
if [ -n "$loose" ]; then
  echo "broken include rule: sim/'s code lives in sim/plan, sim/schedules, sim/engine or sim/output"
  echo "$loose"
  failed=1
fi
[ $failed -eq 0 ] && echo "include rules hold"
exit $failed

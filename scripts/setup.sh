#!/usr/bin/env bash
# Installs the Debian packages dbosim needs, only those missing. Idempotent and non-interactive.
set -euo pipefail
PACKAGES=(cmake g++ make pkgconf libsimgrid-dev libboost-graph-dev libfmt-dev libyaml-cpp-dev catch2
          libcli11-dev nlohmann-json3-dev libbenchmark-dev clang libclang-rt-dev clang-format
          gnuplot-nox chromium openmpi-bin libopenmpi-dev) # dbosim plan: report plots, its browser test, MPI sharding
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

#!/usr/bin/env bash
# Installs the Debian packages trainplan needs (only those missing), then configures the build.
# Usage: scripts/setup.sh            (run as root, or with sudo available)
set -euo pipefail
packages=(cmake ninja-build g++ libyaml-cpp-dev libcli11-dev libboost-graph-dev libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev libfmt-dev libtbb-dev libeigen3-dev
          libopenmpi-dev)  # Open MPI: multi-node calibration (trainplan-calibrate-run under mpirun / srun)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cd "$(dirname "$0")/.."
cmake --preset default >/dev/null

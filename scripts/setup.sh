#!/usr/bin/env bash
# Installs the Debian packages trainplan needs (only those missing), then configures the build.
# Usage: scripts/setup.sh [PRESET] [tests]   (run as root, or with sudo available; PRESET of CMakePresets.json:
#        default (users), dev (-Werror), asan (ASan + UBSan), fuzz (libFuzzer, needs clang); default: default.
#        `tests` also installs what only the test suite needs: chromium (the report in a real browser) and
#        Open MPI (the multi-node calibration path, optional for users))
set -euo pipefail
preset="${1:-default}"
for_tests="${2:-}"
packages=(cmake ninja-build g++ libyaml-cpp-dev libcli11-dev libboost-graph-dev libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev libfmt-dev libtbb-dev libeigen3-dev)
if [ "$preset" = fuzz ]; then
  packages+=(clang libclang-rt-14-dev)  # clang++ with the libFuzzer, ASan and UBSan runtimes
fi
if [ "$for_tests" = tests ]; then
  packages+=(chromium)        # tests/report: headless Chromium opens a report
  packages+=(libopenmpi-dev)  # the MPI path of trainplan-calibrate-run (multi-node calibration) is built and tested
fi
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
cmake --preset "$preset" >/dev/null

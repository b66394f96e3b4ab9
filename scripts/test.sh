#!/usr/bin/env bash
# One command: install what is missing, build, and run the whole test suite.
# Usage: scripts/test.sh [PRESET]   (default: default; CI runs dev (-Werror) and asan (ASan + UBSan))
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
scripts/setup.sh "$preset" tests
cmake --build --preset "$preset"
ctest --preset "$preset"

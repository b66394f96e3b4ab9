#!/usr/bin/env bash
# One command: install what is missing, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --build --preset default
ctest --preset default

#!/usr/bin/env bash
# One command: install what is missing, build, and evaluate the built-in default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --build --preset default
build/cli/trainplan evaluate "$@"

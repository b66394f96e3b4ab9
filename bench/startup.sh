#!/usr/bin/env bash
# Start-up time and peak memory of the trainplan executable (a whole short command: `catalog gpus`),
# optionally against a baseline binary. Uses farm-bench when it is on PATH (paired A/B runs, medians),
# else a plain loop timed by bash.
# Usage: bench/startup.sh [TRAINPLAN] [BASELINE_TRAINPLAN]
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:-build/cli/trainplan}
b=${2:-}
echo "ldd $a (GPU libraries, if any):"
ldd "$a" | grep -Ei 'cuda|cublas|cudnn|nccl|nvidia|mpi' || echo "  none"
if command -v farm-bench >/dev/null; then
  if [ -n "$b" ]; then
    farm-bench -n 20 --vs "$b catalog gpus" -- "$a" catalog gpus
  else
    farm-bench -n 20 -- "$a" catalog gpus
  fi
else
  for bin in "$a" ${b:+"$b"}; do
    start=$(date +%s.%N)
    for _ in $(seq 20); do "$bin" catalog gpus >/dev/null; done
    end=$(date +%s.%N)
    echo "$bin: $(echo "($end - $start) / 20" | bc -l | cut -c1-6) s per run (mean of 20)"
  done
fi

#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset: clang, ASan + UBSan) and runs each for SECONDS
# (default 60) from its seed corpus in fuzz/corpus/<target>/. New inputs go to a scratch copy, never
# into the repository. libFuzzer's -rss_limit_mb (2048) and -timeout are kept at the defaults or
# stricter, so that the bounds on work (model/work_limits.h) are exercised. Exits non-zero on the first
# finding; the crashing input is left in build-fuzz/findings/<target>/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]      (targets: scenario sweep measurements)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(scenario sweep measurements)

scripts/setup.sh fuzz
cmake --build --preset fuzz --target $(printf 'fuzz_%s ' "${targets[@]}")

for t in "${targets[@]}"; do
  work="build-fuzz/corpus/$t"
  findings="build-fuzz/findings/$t"
  mkdir -p "$work" "$findings"
  log="build-fuzz/fuzz-$t.log"
  echo "fuzz: $t for ${seconds}s" >&2
  status=0
  "build-fuzz/fuzz/fuzz_$t" "$work" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "fuzz: $t: ${runs:-?} executions, exit $status" >&2
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log" >&2
    exit "$status"
  fi
done

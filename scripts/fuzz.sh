#!/usr/bin/env bash
# Fuzzes every parser with libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer (clang from Debian; the build is
# scripts/sanitizer-build.sh's build-san/, shared with scripts/sanitize.sh). Usage:
#   scripts/fuzz.sh [RUNS] [SEED] [TARGET...]
# RUNS: executions per target (default 1000000); a fixed SEED repeats a run;
# TARGETs (default: all) name parsers, e.g. run_file.
# Seeds come from tests/data/fuzz/<target>/; a crash is saved as
# build-san/crash-<target>-* and the script fails. Save the input under
# tests/data/fuzz/<target>/ once fixed, so the regression test replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
seed=${2:-0}
targets=(model_spec hf_config machine_profile plan_file fix_option plan_csv token_shard llmc_model checkpoint run_file)
[ $# -gt 2 ] && targets=("${@:3}")
./scripts/sanitizer-build.sh "${targets[@]/#/fuzz_}"
for target in "${targets[@]}"; do
  corpus=build-san/corpus/$target
  mkdir -p "$corpus"
  cp -n tests/data/fuzz/"$target"/* "$corpus"/ 2>/dev/null || true
  echo "== $target: $runs runs"
  UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    build-san/tests/fuzz/fuzz_"$target" "$corpus" -runs="$runs" -max_len=4096 -timeout=10 -seed="$seed" \
    -rss_limit_mb=4096 -artifact_prefix=build-san/crash-"$target"- -print_final_stats=1 2>&1 |
    grep -E "stat::number_of_executed_units|ERROR|SUMMARY|Done|crash-" || true
  if ls build-san/crash-"$target"-* >/dev/null 2>&1; then
    echo "fuzz: $target found a failing input (build-san/crash-$target-*)"; exit 1
  fi
done

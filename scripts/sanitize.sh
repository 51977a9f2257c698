#!/usr/bin/env bash
# Runs the whole test suite (MPI tests included) built with AddressSanitizer
# and UndefinedBehaviorSanitizer (scripts/sanitizer-build.sh, build-san/).
# Open MPI's, oneDNN's and OpenMP's allocations kept until exit are not ours:
# tests/lsan.supp hides them. The property test trains 48 plans: about 850 s
# under the sanitizers on this machine, hence the longer timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/sanitizer-build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build-san --output-on-failure -j2 --timeout 1800

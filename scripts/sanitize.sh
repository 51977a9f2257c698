#!/usr/bin/env bash
# Runs the whole test suite (MPI tests included) built with AddressSanitizer
# and UndefinedBehaviorSanitizer (scripts/sanitizer-build.sh, build-san/).
# Open MPI's, oneDNN's and OpenMP's allocations kept until exit are not ours:
# tests/lsan.supp hides them. Open MPI allocates some in plugins it unloads
# before LeakSanitizer reports (under mpirun and in a singleton `axo train`
# alike); every process preloads tests/keep_loaded.c, a dlclose that does
# nothing, so those frames keep their module's name and the fast frame-pointer
# unwind at each malloc is enough: a full (DWARF) unwind made the planner's
# search ~13x slower (`axo plan` on gpt3-13b: 17.5 s of CPU against 1.3 s)
# and the MPI suites ~2x.
# The property test trains 2 plans per case here (AXO_PROPERTY_PLANS: 12
# plans; scripts/test.sh trains 48, issue 17's CI minimum is 30).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/sanitizer-build.sh
clang -shared -fPIC -O2 -o build-san/libkeep_loaded.so tests/keep_loaded.c
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_PRELOAD=$PWD/build-san/libkeep_loaded.so
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export AXO_PROPERTY_PLANS=2
ctest --test-dir build-san --output-on-failure -j2 --timeout 900

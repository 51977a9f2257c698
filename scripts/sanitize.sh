#!/usr/bin/env bash
# Runs the whole test suite (MPI tests included) built with AddressSanitizer
# and UndefinedBehaviorSanitizer (scripts/sanitizer-build.sh, build-san/).
# Open MPI's, oneDNN's and OpenMP's allocations kept until exit are not ours:
# tests/lsan.supp hides them. Open MPI allocates some from plugins it unloads
# before LeakSanitizer reports, so only a full (DWARF) unwind at each malloc
# reaches a frame the suppressions name: the ranks mpirun starts get it
# (mca_base_env_list); every other process keeps the frame-pointer unwind,
# ~13x faster in the planner's search (`axo plan` on gpt3-13b: 1.3 s of CPU
# against 17.5 s).
# The property test trains 2 plans per case here (AXO_PROPERTY_PLANS: 12
# plans; scripts/test.sh trains 48, issue 17's CI minimum is 30).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/sanitizer-build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export OMPI_MCA_mca_base_env_list="LSAN_OPTIONS=$LSAN_OPTIONS:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export AXO_PROPERTY_PLANS=2
ctest --test-dir build-san --output-on-failure -j2 --timeout 900

#!/usr/bin/env bash
# Builds axo and runs every test (unit, CLI and MPI suites) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build --output-on-failure -j2 --timeout 600

#!/usr/bin/env bash
# The executor's property test over every distinct plan (issue 17): for 2, 4
# and 8 ranks and two small models, each distinct combination of grid and
# options in `axo plan --top 400` trains 2 steps under mpirun and must give
# the single-rank run's losses within 1e-5 relative
# (tests/executor/parallel/plan_property_test.cc; CTest runs a seeded sample).
#   scripts/property_test.sh      (after scripts/build.sh; about 1300 plans)
set -euo pipefail
cd "$(dirname "$0")/.."
test=build/tests/executor/plan_property_test
[ -x "$test" ] || { echo "$test: build first (scripts/build.sh)" >&2; exit 2; }
AXO_PROPERTY_ALL=1 "$test"

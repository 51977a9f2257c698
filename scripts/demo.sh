#!/usr/bin/env bash
# The main job: plan a model on a machine preset, explain the best split,
# write plan.yaml / plans.csv, and check the model against published runs.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
out=${AXO_DEMO_OUT:-demo-out}
mkdir -p "$out"
axo=build/tools/axo
$axo plan --model gpt3-175b --gpus 1024 --machine selene --top 10 \
  --csv "$out/plans.csv" --json "$out/plans.json" --out "$out/plan.yaml" --explain
$axo validate

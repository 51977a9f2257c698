#!/usr/bin/env bash
# The main job: calibrate this machine (4 CPU ranks under mpirun), plan a
# small GPT on that profile, plan GPT-3 175B on 1024 Selene GPUs with an
# explanation, and check the model against published runs.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
out=${AXO_DEMO_OUT:-demo-out}
mkdir -p "$out"
axo=build/tools/axo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --oversubscribe -np 4 $axo calibrate --quick --ranks-per-node 2 --out "$out/this-machine.yaml" \
  > "$out/calibrate.log"
tail -n 1 "$out/calibrate.log"
$axo plan --model gpt2-124m --gpus 4 --machine "$out/this-machine.yaml" --top 5 --out "$out/local-plan.yaml"
$axo plan --model gpt3-175b --gpus 1024 --machine selene --top 10 \
  --csv "$out/plans.csv" --json "$out/plans.json" --out "$out/plan.yaml" --explain
$axo validate

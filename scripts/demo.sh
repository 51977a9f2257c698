#!/usr/bin/env bash
# The main job: calibrate this machine (4 CPU ranks under mpirun), plan on
# that profile, train a small GPT on real text with the plan on 4 ranks,
# compare the plan with the run (axo report) and refine the profile against
# it, plan GPT-3 175B on 1024 Selene GPUs with an explanation, and check the
# model against published runs.
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
$axo plan --model gpt2-124m --gpus 4 --machine "$out/this-machine.yaml" --top 5
# Train a small GPT on real text (the fortunes corpus) on 4 ranks with the plan for this machine
# (offload plans need the executor's offload, not built yet).
$axo plan --model gpt2-tiny --gpus 4 --machine "$out/this-machine.yaml" --fix offload=off --top 3 \
  --out "$out/tiny-plan.yaml"
$axo data encode --in /usr/share/games/fortunes/{literature,wisdom,people,science} --out "$out/fortunes"
mpirun --oversubscribe -np 4 $axo train --plan "$out/tiny-plan.yaml" --data "$out/fortunes_train_*.bin" \
  --val-data "$out/fortunes_val_*.bin" --steps 300 --lr 3e-3 --warmup 20 --val-every 100 --seq 64 \
  --run "$out/run.json" --save-model "$out/tiny.bin" | awk 'NR % 50 == 0 || /val/'
# Predicted against measured for that run, then this machine's profile refined against it.
$axo report --plan "$out/tiny-plan.yaml" --run "$out/run.json" --csv "$out/cost.csv" --svg "$out/cost.svg"
$axo calibrate --refine "$out/run.json" --plan "$out/tiny-plan.yaml" --machine "$out/this-machine.yaml" \
  --out "$out/this-machine-refined.yaml"
$axo plan --model gpt3-175b --gpus 1024 --machine selene --top 10 \
  --csv "$out/plans.csv" --json "$out/plans.json" --out "$out/plan.yaml" --explain
$axo validate

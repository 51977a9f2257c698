#!/usr/bin/env bash
# The main job: the closed loop on this machine (scripts/loop.sh: calibrate 4
# CPU ranks, plan a small GPT for 4 ranks, train the top plans, report
# predicted against measured, refine the profile, report again), then train
# the planner's pick for 300 steps on real text, plan GPT-3 175B on 1024
# Selene GPUs with an explanation, and check the model against published runs.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
out=${AXO_DEMO_OUT:-demo-out}
mkdir -p "$out"
axo=build/tools/axo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
./scripts/loop.sh "$out" 5 40
echo
echo "== The planner's pick trained on real text (the fortunes corpus), 4 ranks =="
mpirun --oversubscribe -np 4 $axo train --plan "$out/plan-1.yaml" --data "$out/fortunes_train_*.bin" \
  --val-data "$out/fortunes_val_*.bin" --steps 300 --lr 3e-3 --warmup 20 --val-every 100 \
  --run "$out/run.json" --save-model "$out/model.bin" | awk 'NR % 50 == 0 || /val/'
$axo report --plan "$out/plan-1.yaml" --run "$out/run.json" --machine "$out/machine-refined.yaml" \
  --csv "$out/cost.csv" --svg "$out/cost.svg"
echo
$axo plan --model gpt3-175b --gpus 1024 --machine selene --top 10 \
  --csv "$out/plans.csv" --json "$out/plans.json" --out "$out/plan.yaml" --explain
$axo validate

#!/usr/bin/env bash
# The closed loop on this machine (issue 7): calibrate 4 CPU ranks, plan a
# small GPT for 4 ranks, train the top plans for a few steps each, report
# predicted against measured, refine the profile on those runs, and report
# again on the refined profile. Prints the two figures that say how good the
# planner is here: the worst |error| of the predicted iteration time over the
# top plans, and how far the planner's pick is from the fastest measured.
#   scripts/loop.sh [OUT_DIR] [PLANS] [STEPS] [MODEL]     (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-loop-out}
plans=${2:-5}
steps=${3:-40}
model=${4:-gpt2-mini}
axo=build/tools/axo
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"

# This machine as it is: 4 ranks on one node.
mpirun --oversubscribe -np 4 $axo calibrate --quick --ranks-per-node 4 --model "$model" --out "$out/machine.yaml" > "$out/calibrate.log"
tail -n 1 "$out/calibrate.log"
[ -f "$out/fortunes_train_000000.bin" ] ||
  $axo data encode --in /usr/share/games/fortunes/{literature,wisdom,people,science} --out "$out/fortunes" > /dev/null

# The top plans (offload plans need the executor's offload, not built yet).
$axo plan --model "$model" --gpus 4 --machine "$out/machine.yaml" --fix offload=off --top "$plans" \
  --csv "$out/plans.csv" | sed -n "1,$((plans + 2))p"
pairs=() runs=() plan_files=()
for k in $(seq 1 "$plans"); do
  $axo plan --model "$model" --gpus 4 --machine "$out/machine.yaml" --fix offload=off --top "$plans" --rank "$k" \
    --out "$out/plan-$k.yaml" > /dev/null
  mpirun --oversubscribe -np 4 $axo train --plan "$out/plan-$k.yaml" --data "$out/fortunes_train_*.bin" \
    --steps "$steps" --run "$out/run-$k.json" > "$out/train-$k.log"
  pairs+=(--plan "$out/plan-$k.yaml" --run "$out/run-$k.json")
  runs+=("$out/run-$k.json")
  plan_files+=("$out/plan-$k.yaml")
done

echo
echo "== Predicted (calibrated profile) against measured =="
$axo report "${pairs[@]}" --csv "$out/report.csv" --svg "$out/report.svg"
echo
echo "== The profile refined on these runs =="
$axo calibrate --refine "${runs[@]}" --plan "${plan_files[@]}" --machine "$out/machine.yaml" \
  --out "$out/machine-refined.yaml"
echo
echo "== Predicted (refined profile) against measured =="
$axo report "${pairs[@]}" --machine "$out/machine-refined.yaml" --csv "$out/report-refined.csv" \
  --svg "$out/report-refined.svg"

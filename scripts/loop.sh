#!/usr/bin/env bash
# The closed loop on this machine (issue 7): calibrate 4 CPU ranks, plan a
# small GPT for 4 ranks, train the top plans for a few steps each, report
# predicted against measured, refine the profile on those runs, and report
# again on the refined profile, for those runs and for three plans further
# down the ranking that the refinement did not see. Prints the two figures
# that say how good the planner is here: the worst |error| of the predicted
# iteration time over the top plans, and how far the planner's pick is from
# the fastest measured.
#   scripts/loop.sh [OUT_DIR] [PLANS<=30] [STEPS] [MODEL]     (after scripts/build.sh)
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

# The top plans, offload off: on CPU an offloaded twin costs within a percent of
# its plan, and would crowd distinct grids out of the top 5.
$axo plan --model "$model" --gpus 4 --machine "$out/machine.yaml" --fix offload=off --top "$plans" \
  --csv "$out/plans.csv" | sed -n "1,$((plans + 2))p"
# Plan ranked k of the top 30: plan-k.yaml, trained into run-k.json.
train_plan() {
  $axo plan --model "$model" --gpus 4 --machine "$out/machine.yaml" --fix offload=off --top 30 --rank "$1" \
    --out "$out/plan-$1.yaml" > /dev/null
  mpirun --oversubscribe -np 4 $axo train --plan "$out/plan-$1.yaml" --data "$out/fortunes_train_*.bin" \
    --steps "$steps" --run "$out/run-$1.json" > "$out/train-$1.log"
}
pairs=() runs=() plan_files=() held_out=()
for k in $(seq 1 "$plans"); do
  train_plan "$k"
  pairs+=(--plan "$out/plan-$k.yaml" --run "$out/run-$k.json")
  runs+=("$out/run-$k.json")
  plan_files+=("$out/plan-$k.yaml")
done
# Three plans further down the ranking (other grids and microbatches), which
# the refinement does not see: its out-of-sample check.
for k in 10 20 30; do
  train_plan "$k"
  held_out+=(--plan "$out/plan-$k.yaml" --run "$out/run-$k.json")
done

echo
echo "== Predicted (calibrated profile) against measured =="
$axo report "${pairs[@]}" --csv "$out/report.csv" --svg "$out/report.svg"
echo
echo "== The profile refined on these runs =="
$axo calibrate --refine "${runs[@]}" --plan "${plan_files[@]}" --machine "$out/machine.yaml" \
  --out "$out/machine-refined.yaml"
echo
echo "== Predicted (refined profile) against measured: the runs it was fitted to =="
$axo report "${pairs[@]}" --machine "$out/machine-refined.yaml" --csv "$out/report-refined.csv" \
  --svg "$out/report-refined.svg"
echo
echo "== Held-out plans (ranked 10, 20, 30): calibrated, then refined profile =="
$axo report "${held_out[@]}"
$axo report "${held_out[@]}" --machine "$out/machine-refined.yaml"

#!/usr/bin/env bash
# Issue 18's numerics check, too long for CI: 200 steps of gpt2-mini in fp32
# and in each 2-byte precision (--precision bf16 or fp16: 2-byte weights,
# gradients and kept activations, fp32 masters and moments; fp16 with its
# dynamic loss scaling) from the same seed on the same tokens; the mean loss
# of the last 20 steps in each must be within 2% of fp32's. Prints each and
# its difference; exits 1 when one is outside.
#   scripts/mixed_precision_numerics.sh [OUT_DIR] [STEPS] [PRECISIONS]   (after scripts/build.sh)
#   PRECISIONS: a space-separated list, default "bf16 fp16".
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-mixed-precision-numerics-out}
steps=${2:-200}
precisions=${3:-bf16 fp16}
axo=build/tools/axo
mkdir -p "$out"
[ -f "$out/fortunes_train_000000.bin" ] ||
  $axo data encode --in /usr/share/games/fortunes/{literature,wisdom,people,science} --out "$out/fortunes" > /dev/null
for precision in fp32 $precisions; do
  $axo train --model gpt2-mini --precision "$precision" --data "$out/fortunes_train_*.bin" --steps "$steps" \
    --lr 1e-3 --warmup 20 --seed 1337 --run "$out/$precision.json" > "$out/$precision.log"
  grep -m1 "^precision:" "$out/$precision.log"
  grep "skipped on every rank" "$out/$precision.log" || true  # fp16's overflows, if any
done
# The mean of the last 20 steps' losses in each run.json.
last_losses() {
  grep -o '"loss": [0-9.eE+-]*' "$1" | tail -n 20 | awk '{ s += $2 } END { printf "%.6f", s / NR }'
}
fp32=$(last_losses "$out/fp32.json")
status=0
for precision in $precisions; do
  half=$(last_losses "$out/$precision.json")
  awk -v a="$fp32" -v b="$half" -v p="$precision" 'BEGIN {
    d = 100 * (b - a) / a
    printf "gpt2-mini, last 20 of the steps: fp32 loss %.4f, %s loss %.4f, %s - fp32 = %+.2f%% (limit 2%%)\n", a, p, b, p, d
    exit (d < -2 || d > 2) ? 1 : 0
  }' || status=1
done
exit $status

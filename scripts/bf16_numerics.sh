#!/usr/bin/env bash
# Issue 18's numerics check, too long for CI: 200 steps of gpt2-mini in fp32
# and in bf16 (--precision bf16: bf16 weights, gradients and kept
# activations, fp32 masters and moments) from the same seed on the same
# tokens; the mean loss of the last 20 steps in bf16 must be within 2% of
# fp32's. Prints both and their difference; exits 1 when outside.
#   scripts/bf16_numerics.sh [OUT_DIR] [STEPS]     (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bf16-numerics-out}
steps=${2:-200}
axo=build/tools/axo
mkdir -p "$out"
[ -f "$out/fortunes_train_000000.bin" ] ||
  $axo data encode --in /usr/share/games/fortunes/{literature,wisdom,people,science} --out "$out/fortunes" > /dev/null
for precision in fp32 bf16; do
  $axo train --model gpt2-mini --precision "$precision" --data "$out/fortunes_train_*.bin" --steps "$steps" \
    --lr 1e-3 --warmup 20 --seed 1337 --run "$out/$precision.json" > "$out/$precision.log"
  grep -m1 "^precision:" "$out/$precision.log"
done
# The mean of the last 20 steps' losses in each run.json.
last_losses() {
  grep -o '"loss": [0-9.eE+-]*' "$1" | tail -n 20 | awk '{ s += $2 } END { printf "%.6f", s / NR }'
}
fp32=$(last_losses "$out/fp32.json")
bf16=$(last_losses "$out/bf16.json")
awk -v a="$fp32" -v b="$bf16" 'BEGIN {
  d = 100 * (b - a) / a
  printf "gpt2-mini, last 20 of the steps: fp32 loss %.4f, bf16 loss %.4f, bf16 - fp32 = %+.2f%% (limit 2%%)\n", a, b, d
  exit (d < -2 || d > 2) ? 1 : 0
}'

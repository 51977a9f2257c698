#!/usr/bin/env bash
# Out-of-corpus check: axo's predictions against a published Megatron weak-scaling table that is
# deliberately not in configs/validation (nothing is fitted to it): the Megatron-LM README's table
# (NVIDIA/Megatron-LM images/model_table.png, Megatron-Core r0.8.0 on H100, bf16, sequence 4096,
# vocabulary 131072, GPT-3-style blocks). Each row gives the model, its TP / PP / data-parallel
# split, GPUs, global batch and the per-GPU TFLOP/s it reached; the measured iteration time is the
# row's FLOPs over GPUs x TFLOP/s, with Megatron's num_floating_point_operations for these blocks:
# 72 B s l h^2 (1 + s/6h + V/12lh). The table does not state the microbatch or the interleaving:
# each row is priced with one sequence per microbatch and no interleaving (Megatron's defaults),
# and again with the planner's best choice of the fields the table leaves open.
# (Narayanan et al. 2021 Table 1, the A100 Megatron-LM table, is a validation set now, priced with
# the settings of NVIDIA's own script for it: configs/validation/narayanan2021_table1.yaml.)
# Usage: scripts/out_of_corpus.sh [path to the axo binary, default build/tools/axo]
set -euo pipefail
cd "$(dirname "$0")/.."
axo=${1:-build/tools/axo}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# predicted_seconds MODEL GPUS BATCH MACHINE FIX: the iteration time of the best plan with FIX held.
predicted_seconds() {
  "$axo" plan --model "$1" --gpus "$2" --batch "$3" --machine "$4" --fix "$5" --top 1 --csv "$work/plan.csv" >/dev/null
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "iter_time_s") col = i } NR == 2 { print $col }' "$work/plan.csv"
}

# check NAME MODEL GPUS BATCH MACHINE SPLIT MEASURED_S: one row, both ways.
check() {
  local fixed free
  fixed=$(predicted_seconds "$2" "$3" "$4" "$5" "$6,microbatch=1,interleave=1")
  free=$(predicted_seconds "$2" "$3" "$4" "$5" "$6")
  awk -v n="$1" -v g="$3" -v m="$7" -v a="$fixed" -v b="$free" 'BEGIN {
    printf "%-6s %5d GPUs  measured %8.3f s  mb 1: %8.3f s (%+5.1f%%)  planner: %8.3f s (%+5.1f%%)\n",
           n, g, m, a, 100 * (a - m) / m, b, 100 * (b - m) / m }'
}

echo "Megatron-LM README table (H100, Megatron-Core r0.8.0) on dgx-h100:"
while read -r size heads hidden layers tp pp gpus batch tflops; do
  cat >"$work/mcore-$size.yaml" <<YAML
name: mcore-$size
source: "Megatron-LM README model table (Megatron-Core r0.8.0)"
layers: $layers
hidden: $hidden
heads: $heads
seq_len: 4096
vocab: 131072
global_batch: $batch
precision: bf16
YAML
  measured=$(awk -v B="$batch" -v l="$layers" -v h="$hidden" -v g="$gpus" -v t="$tflops" 'BEGIN {
    s = 4096; V = 131072; print 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) / (g * t * 1e12) }')
  split="pipeline=$pp,y=$tp,x=1,z=1,data=$((gpus / (tp * pp))),context=1,offload=off"
  check "$size" "$work/mcore-$size.yaml" "$gpus" "$batch" dgx-h100 "$split" "$measured"
done <<'ROWS'
1.7b 16 2048 24 1 1 48 192 408.8
7.1b 32 4096 30 2 1 96 192 465.9
16b 48 6144 32 4 1 192 192 489.1
32b 56 7168 48 8 1 384 192 459.6
70b 64 8192 84 8 2 768 384 419.7
119b 80 10240 92 8 4 1536 768 420.5
177b 96 12288 96 8 6 2304 1152 432.8
314b 128 16384 96 8 8 3072 1536 474.4
462b 144 18432 112 8 16 6144 3072 459.9
ROWS

#!/usr/bin/env bash
# Out-of-corpus check: axo's predictions against two published Megatron weak-scaling tables that
# are deliberately not in configs/validation (nothing is fitted to them). Each row gives the
# model, its TP / PP / data-parallel split, GPUs, global batch and the per-GPU TFLOP/s it
# reached; the measured iteration time is the row's FLOPs (its own formula) over GPUs x TFLOP/s.
#   A100: Narayanan et al. SC'21 (arXiv 2104.04473) Table 1, Megatron-LM on Selene (fp16,
#         sequence 2048, vocabulary 51200, full recompute). FLOPs per iteration, the paper's
#         eq. 3 (recompute counted): 96 B s l h^2 (1 + s/6h + V/16lh).
#   H100: the Megatron-LM README's table (NVIDIA/Megatron-LM images/model_table.png,
#         Megatron-Core r0.8.0, bf16, sequence 4096, vocabulary 131072, GPT-3-style blocks).
#         FLOPs, Megatron's num_floating_point_operations for these blocks: 72 B s l h^2
#         (1 + s/6h + V/12lh).
# Neither table states the microbatch or the interleaving: each row is priced with one
# sequence per microbatch and no interleaving (Megatron's defaults), and again with the
# planner's best choice of the fields the table leaves open.
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

echo "Narayanan et al. 2021, Table 1 (A100, Megatron-LM) on selene:"
while read -r size layers hidden tp pp gpus batch tflops; do
  measured=$(awk -v B="$batch" -v l="$layers" -v h="$hidden" -v g="$gpus" -v t="$tflops" 'BEGIN {
    s = 2048; V = 51200; print 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) / (g * t * 1e12) }')
  split="pipeline=$pp,y=$tp,x=1,z=1,data=$((gpus / (tp * pp))),context=1,recompute=full,offload=off,zero=0,sequence_parallel=off"
  check "$size" "megatron-$size" "$gpus" "$batch" selene "$split" "$measured"
done <<'ROWS'
1.7b 24 2304 1 1 32 512 137
3.6b 30 3072 2 1 64 512 138
7.5b 36 4096 4 1 128 512 142
18b 40 6144 8 1 256 1024 135
39b 48 8192 8 2 512 1536 138
76b 60 10240 8 4 1024 1792 140
145b 80 12288 8 8 1536 2304 148
310b 96 16384 8 16 1920 2160 155
530b 105 20480 8 35 2520 2520 163
1t 128 25600 8 64 3072 3072 163
ROWS

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

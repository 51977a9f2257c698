// The attention core as a flash-attention stack runs it: one fused kernel per
// direction that keeps the [s × s] scores and probabilities on chip
// (FlashAttention-2, Dao 2023, arXiv 2307.08691). The materialized form (two
// batched GEMMs and a softmax through memory) is priced in cost_layer.cc.
//
// FLOPs per sequence and head of dimension d (Dao-AILab/flash-attention,
// benchmarks/benchmark_flash_attention.py): forward QKᵀ and PV, 2·s²·d each,
// 4·s²·d dense; backward recomputes QKᵀ and runs dV, dP, dQ, dK: five
// GEMMs, 2.5× the forward. Causal masking: the kernel skips the key tiles
// wholly above the diagonal and computes the diagonal tiles in full (Dao 2023,
// section 3.1.1), so with B-token tiles and n = s/B tiles a side it computes
// n(n+1)/2 of the n² tiles: the fraction (1 + B/s)/2. Time is the computed
// FLOPs at the profile's attention_efficiency of peak (times flash3_speedup for
// a flash3 stack's Hopper-native kernel), plus the launches.
#pragma once

#include "model/machine_profile.h"

namespace axo {

// FlashAttention-2's tile edge in tokens: blocks of {64, 128} × {64, 128}
// (Dao 2023, section 3.3); 128 × 128 for the head dimensions 64 and 128 of
// its forward kernel on A100 and H100.
inline constexpr double kFlashTileTokens = 128;

// The fraction of the dense [s × s] tiles a causal kernel computes: (1 + B/s)/2, 1 for s ≤ B.
double causal_tile_fraction(double seq);

struct FlashAttention {
  double forward_flops = 0, backward_flops = 0;  // computed (causal tiles), all heads
  double forward_s = 0, backward_s = 0;
};

// `heads` (sequence, head) pairs of `seq` tokens and dimension `head_dim` on one rank.
FlashAttention flash_attention(const MachineProfile& machine, Precision precision, double heads, double seq,
                               double head_dim);

}  // namespace axo

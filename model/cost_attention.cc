// Flash attention's time on one rank (see cost_attention.h).
#include "model/cost_attention.h"

namespace axo {

namespace {
// Kernels per direction: the forward one; backward the dO·O row sums, the main
// kernel and the fp32 dQ accumulator's conversion (flash-attention's
// flash_bwd_launch_template.h).
constexpr double kForwardKernels = 1, kBackwardKernels = 3;
}  // namespace

double causal_tile_fraction(double seq) {
  if (seq <= kFlashTileTokens) return 1.0;
  return 0.5 * (1.0 + kFlashTileTokens / seq);
}

FlashAttention flash_attention(const MachineProfile& machine, Precision precision, double heads, double seq,
                               double head_dim) {
  FlashAttention a;
  a.forward_flops = 4.0 * heads * seq * seq * head_dim * causal_tile_fraction(seq);
  a.backward_flops = 2.5 * a.forward_flops;
  // A flash3 kernel (Hopper's wgmma and TMA) runs flash3_speedup times FlashAttention-2's rate.
  const double speedup = machine.attention == AttentionKind::flash3 ? machine.flash3_speedup : 1.0;
  const double flops_per_s = machine.peak_tflops(precision) * 1e12 * machine.attention_efficiency * speedup;
  const double launch = machine.kernel_launch_us * 1e-6;
  a.forward_s = a.forward_flops / flops_per_s + kForwardKernels * launch;
  a.backward_s = a.backward_flops / flops_per_s + kBackwardKernels * launch;
  return a;
}

}  // namespace axo

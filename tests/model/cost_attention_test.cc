// Flash attention's FLOPs and time against hand computations (cost_attention.h).
#include "model/cost_attention.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(CostAttention, CausalTileFractionCountsTheDiagonalTiles) {
  // s = 1024: n = 8 tiles a side, 8·9/2 = 36 of 64 computed.
  EXPECT_DOUBLE_EQ(causal_tile_fraction(1024), 36.0 / 64.0);
  EXPECT_DOUBLE_EQ(causal_tile_fraction(2048), 136.0 / 256.0);
  EXPECT_DOUBLE_EQ(causal_tile_fraction(128), 1.0);  // one tile: computed whole
  EXPECT_DOUBLE_EQ(causal_tile_fraction(64), 1.0);
}

TEST(CostAttention, FlopsAndSecondsByHand) {
  MachineProfile m = load_machine("dgx-h100");
  m.attention = AttentionKind::flash;  // FlashAttention-2's rate
  m.attention_efficiency = 0.4;
  m.kernel_launch_us = 4;
  const double heads = 32, s = 4096, d = 128;
  const FlashAttention a = flash_attention(m, Precision::bf16, heads, s, d);
  const double forward = 4 * heads * s * s * d * (1 + 128.0 / 4096) / 2;
  EXPECT_DOUBLE_EQ(a.forward_flops, forward);
  EXPECT_DOUBLE_EQ(a.backward_flops, 2.5 * forward);
  const double rate = 989e12 * 0.4;
  EXPECT_NEAR(a.forward_s, forward / rate + 4e-6, 1e-12);
  EXPECT_NEAR(a.backward_s, 2.5 * forward / rate + 3 * 4e-6, 1e-12);
  // A Hopper-native kernel (flash3): the same FLOPs at flash3_speedup times the rate.
  m.attention = AttentionKind::flash3;
  m.flash3_speedup = 1.5;
  const FlashAttention hopper = flash_attention(m, Precision::bf16, heads, s, d);
  EXPECT_DOUBLE_EQ(hopper.forward_flops, forward);
  EXPECT_NEAR(hopper.forward_s, forward / (1.5 * rate) + 4e-6, 1e-12);
  EXPECT_NEAR(hopper.backward_s, 2.5 * forward / (1.5 * rate) + 3 * 4e-6, 1e-12);
}

}  // namespace
}  // namespace axo

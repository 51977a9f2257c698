// Local shapes of one rank (model/cost_shapes.h).
#include "model/cost_shapes.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(CostShapes, FourDSplitsOfTheLinearLayers) {
  const TransformerSpec spec = load_model("gpt3-13b");  // h 5120, 40 heads, ffn 20480, bf16
  ParallelConfig c;
  c.x = 2, c.y = 4, c.z = 2, c.microbatch = 2;
  const LocalShapes s = local_shapes(spec, c);
  const double h = 5120, T = 2 * 2048 / 2;
  EXPECT_EQ(s.element_bytes, 2);
  EXPECT_EQ(s.tokens, T);
  EXPECT_EQ(s.hidden_local, h / 2);
  EXPECT_EQ(s.hidden_elems, T * h / 2);
  EXPECT_EQ(s.attention_batch, 1 * 10);  // (b/z)·(a/y)
  const LocalLinear& qkv = s.linears[0];  // plain: in over X, out over Y
  EXPECT_EQ(qkv.in_dim, GridDim::x);
  EXPECT_EQ(qkv.m, T);
  EXPECT_EQ(qkv.n, 3 * h / 4);
  EXPECT_EQ(qkv.k, h / 2);
  EXPECT_EQ(qkv.block, 3 * h * h / 8);
  const LocalLinear& down = s.linears[3];  // transposed: in over Y, out over X
  EXPECT_EQ(down.in_dim, GridDim::y);
  EXPECT_EQ(down.n, h / 2);
  EXPECT_EQ(down.k, 20480 / 4);
  EXPECT_EQ(s.vocab_local, 50688 / 4);  // 50257 padded to 99 · 512
}

TEST(CostShapes, SequenceParallelismSplitsHiddenSpaceTokensOverY) {
  const TransformerSpec spec = load_model("gpt3-13b");
  ParallelConfig c;
  c.y = 8, c.sequence_parallel = true;
  EXPECT_EQ(local_shapes(spec, c).hidden_elems, 2048.0 * 5120 / 8);
  // With z = 4 each Z rank holds microbatch/z = 2 sequences, their rows split over Y.
  c.z = 4, c.microbatch = 8;
  EXPECT_EQ(local_shapes(spec, c).tokens, 2 * 2048.0);
  EXPECT_EQ(local_shapes(spec, c).hidden_elems, 2 * 2048.0 * 5120 / 8);
}

TEST(CostShapes, MemoryOpsRunAtTheEffectiveBandwidthPlusLaunches) {
  MachineProfile m;
  m.hbm_bandwidth_GBps = 2000, m.memory_bound_efficiency = 0.5, m.kernel_launch_us = 4;
  EXPECT_DOUBLE_EQ(memory_op_seconds(m, 1e9, 2), 1e9 / 1e12 + 8e-6);
}

}  // namespace
}  // namespace axo

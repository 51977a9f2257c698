// One layer's compute (model/cost_layer.h).
#include "model/cost_layer.h"

#include <gtest/gtest.h>

#include "model/cost_attention.h"
#include "model/presets.h"

namespace axo {
namespace {

double sum_seconds(const std::vector<CostItem>& items, CostPhase phase) {
  double sum = 0;
  for (const CostItem& item : items) sum += item.phase == phase ? item.seconds : 0;
  return sum;
}

TEST(CostLayer, RecordedItemsAddUpToTheReturnedTimes) {
  const TransformerSpec spec = load_model("llama3-8b");  // swiglu, rope
  MachineProfile machine = load_machine("dgx-h100");
  machine.attention = AttentionKind::materialized;  // the four attention GEMMs and the softmax
  ParallelConfig c;
  c.x = 2, c.y = 2, c.z = 2, c.microbatch = 2, c.recompute = Recompute::full;
  const LocalShapes shapes = local_shapes(spec, c);
  std::vector<CostItem> items;
  const LayerCompute layer = layer_compute({spec, machine, c, shapes}, CostRecorder(&items, 1, 1));
  EXPECT_NEAR(sum_seconds(items, CostPhase::forward), layer.forward, 1e-12 * layer.forward);
  EXPECT_NEAR(sum_seconds(items, CostPhase::backward), layer.backward, 1e-12 * layer.backward);
  EXPECT_DOUBLE_EQ(sum_seconds(items, CostPhase::recompute), layer.recompute);
  EXPECT_DOUBLE_EQ(layer.recompute, layer.forward);  // full: the whole forward again
  bool rope = false;
  for (const CostItem& item : items) rope |= item.name == "rotary embedding";
  EXPECT_TRUE(rope);
  // The attention backward's two GEMMs per item run at about the forward's rate, not half of it.
  double forward_rate = 0, backward_rate = 0;
  for (const CostItem& item : items) {
    if (item.name.rfind("attention scores [", 0) == 0) forward_rate = item.bandwidth_GBps;
    if (item.name.rfind("attention scores dQ dK [", 0) == 0) backward_rate = item.bandwidth_GBps;
  }
  EXPECT_GT(backward_rate, 0.75 * forward_rate);
  // Unrecorded, the numbers are the same.
  const LayerCompute silent = layer_compute({spec, machine, c, shapes}, CostRecorder());
  EXPECT_EQ(silent.total(), layer.total());
}

TEST(CostLayer, SelectiveRecomputeIsTheAttentionCoreAndWindowsExcludeDw) {
  const TransformerSpec spec = load_model("gpt3-13b");
  const MachineProfile machine = load_machine("selene");
  ParallelConfig c;
  c.y = 4, c.microbatch = 1;
  const LocalShapes shapes = local_shapes(spec, c);
  c.recompute = Recompute::none;
  const LayerCompute none = layer_compute({spec, machine, c, shapes}, CostRecorder());
  c.recompute = Recompute::selective;
  const LayerCompute selective = layer_compute({spec, machine, c, shapes}, CostRecorder());
  EXPECT_EQ(none.recompute, 0);
  EXPECT_GT(selective.recompute, 0);
  EXPECT_LT(selective.recompute, 0.5 * selective.forward);
  double dw = 0;
  for (double t : selective.linear_dw) dw += t;
  EXPECT_DOUBLE_EQ(selective.backward_window, selective.backward + selective.recompute - dw);
  EXPECT_LT(selective.forward_gemm, selective.forward);
}

// torchtitan's per-op selective recompute: the matmuls whose outputs its policy dropped (wk of
// qkv, wo, w3 of SwiGLU's fused w1|w3) and every memory-bound forward op run again; the
// attention kernel does not (its output is kept).
TEST(CostLayer, PerOpSelectiveRecomputesTheUnsavedMatmulsAndMemoryOps) {
  const TransformerSpec spec = load_model("llama3-8b");  // SwiGLU, 8 KV heads
  MachineProfile machine = load_machine("dgx-h100");
  machine.attention = AttentionKind::flash, machine.selective = SelectiveKind::per_op;
  ParallelConfig c;
  c.z = 8, c.microbatch = 8, c.recompute = Recompute::selective;
  const LocalShapes shapes = local_shapes(spec, c);
  std::vector<CostItem> items;
  const LayerCompute layer = layer_compute({spec, machine, c, shapes}, CostRecorder(&items, 1, 1));
  double gemm[4] = {}, memory_forward = 0;
  for (const CostItem& item : items) {
    if (item.phase != CostPhase::forward) continue;
    if (item.kind == CostKind::memory) memory_forward += item.seconds;
    for (int i = 0; i < 4; ++i) {
      if (item.name.rfind(std::string(shapes.linears[i].full.name) + " [", 0) == 0) gemm[i] = item.seconds;
    }
  }
  const double d = double(spec.head_dim());
  const double wk = gemm[0] * double(spec.kv_heads) * d / (double(spec.heads + 2 * spec.kv_heads) * d);
  EXPECT_NEAR(layer.recompute, memory_forward + wk + gemm[1] + gemm[2] / 2, 1e-12 * layer.recompute);
  EXPECT_DOUBLE_EQ(sum_seconds(items, CostPhase::recompute), layer.recompute);
  machine.selective = SelectiveKind::attention;  // Megatron's: the attention core alone
  EXPECT_DOUBLE_EQ(layer_compute({spec, machine, c, shapes}, CostRecorder()).recompute,
                   layer.attention_forward);
}

}  // namespace
}  // namespace axo

namespace axo {
namespace {

// A flash stack: one fused kernel each way in place of the four attention
// GEMMs, no softmax item, and selective recompute runs the fused forward again.
TEST(CostLayer, FlashAttentionIsOneFusedKernelWithoutSoftmaxTraffic) {
  const TransformerSpec spec = load_model("gpt3-175b");
  MachineProfile machine = load_machine("dgx-h100");
  machine.attention = AttentionKind::flash;
  ParallelConfig c;
  c.y = 8, c.microbatch = 2, c.recompute = Recompute::selective;
  const LocalShapes shapes = local_shapes(spec, c);
  std::vector<CostItem> items;
  const LayerCompute layer = layer_compute({spec, machine, c, shapes}, CostRecorder(&items, 1, 1));
  const FlashAttention flash =
      flash_attention(machine, spec.precision, shapes.attention_batch, shapes.seq, shapes.head_dim);
  double fused_forward = 0, fused_backward = 0;
  for (const CostItem& item : items) {
    EXPECT_NE(item.name.rfind("softmax", 0), 0u) << item.name;
    EXPECT_NE(item.name.rfind("attention scores", 0), 0u) << item.name;
    if (item.name.rfind("flash attention [", 0) == 0) fused_forward += item.seconds;
    if (item.name.rfind("flash attention backward [", 0) == 0) fused_backward += item.seconds;
  }
  EXPECT_DOUBLE_EQ(fused_forward, flash.forward_s);
  EXPECT_DOUBLE_EQ(fused_backward, flash.backward_s);
  EXPECT_DOUBLE_EQ(layer.recompute, flash.forward_s);
  machine.attention = AttentionKind::materialized;
  const LayerCompute materialized = layer_compute({spec, machine, c, shapes}, CostRecorder());
  EXPECT_GT(materialized.recompute, 0);
  EXPECT_NE(materialized.recompute, layer.recompute);
}

}  // namespace
}  // namespace axo

// One layer's compute (model/cost_layer.h).
#include "model/cost_layer.h"

#include <gtest/gtest.h>

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
  const MachineProfile machine = load_machine("dgx-h100");
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

}  // namespace
}  // namespace axo

// The pipeline's bubble and point-to-point traffic (model/cost_pipeline.h).
#include "model/cost_pipeline.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(CostPipeline, BubbleIsPMinusOneOverVStageTimes) {
  ParallelConfig c;
  StageTime stage;
  stage.compute = 3, stage.tp_comm = 1;
  EXPECT_EQ(pipeline_bubble(c, stage), 0);
  c.pipeline = 8, c.interleave = 2;
  EXPECT_DOUBLE_EQ(pipeline_bubble(c, stage), 7.0 / 2 * 4);
}

TEST(CostPipeline, SendsOneYthOfTheActivationPerBoundaryAndGathersItOverY) {
  const TransformerSpec spec = load_model("gpt3-13b");
  const MachineProfile machine = load_machine("selene");
  ParallelConfig c;
  c.pipeline = 4, c.y = 4, c.data = 2, c.interleave = 2;
  const LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, shapes};
  const double m = 16, activation = 2048.0 * 5120 * 2;
  std::vector<CostItem> items;
  const double t = pipeline_p2p(in, m, CostRecorder(&items, 1, m));
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].kind, CostKind::p2p);
  EXPECT_EQ(items[0].group, GridDim::pipeline);
  EXPECT_DOUBLE_EQ(items[0].bytes, activation / 4);
  EXPECT_DOUBLE_EQ(items[0].per_iteration, 2 * (2 * m + 3));
  const double send = collective_seconds(machine, CollectiveOp::send_recv, {2, 1}, activation / 4);
  const double gather = collective_seconds(machine, CollectiveOp::all_gather, {4, 4}, activation);
  EXPECT_DOUBLE_EQ(t, 2 * (2 * m + 3) * (send + gather));
  MachineProfile fp32_sends = machine;  // axo's executor's messages are fp32 (stack.activation_comm_dtype)
  fp32_sends.activation_comm_dtype = ActivationCommDtype::fp32;
  std::vector<CostItem> fp32_items;
  pipeline_p2p({spec, fp32_sends, c, shapes}, m, CostRecorder(&fp32_items, 1, m));
  ASSERT_EQ(fp32_items.size(), 1u);
  EXPECT_DOUBLE_EQ(fp32_items[0].bytes, 2 * activation / 4);
  c.sequence_parallel = true;  // the activation is already split over Y: no gather
  EXPECT_DOUBLE_EQ(pipeline_p2p({spec, machine, c, local_shapes(spec, c)}, m, CostRecorder()), 2 * (2 * m + 3) * send);
  c.pipeline = 1, c.interleave = 1;
  EXPECT_EQ(pipeline_p2p({spec, machine, c, shapes}, m, CostRecorder()), 0);
}

}  // namespace
}  // namespace axo

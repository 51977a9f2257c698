// A stage's time and the slowest stage (model/cost_stage.h).
#include "model/cost_stage.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

LayerCompute layer_of(double forward, double backward) {
  LayerCompute layer;
  layer.forward = forward, layer.backward = backward;
  return layer;
}

TEST(CostStage, OneStageRunsEverything) {
  ParallelConfig c;
  const LayerComm comm{0.1, 0, 0.2};
  StageEndCompute ends;
  ends.first_forward = 1, ends.first_backward = 2, ends.last_forward = 3, ends.last_backward = 4;
  const StageEndComm ends_comm{0.5, 0.25, 0.25};
  const StageTime stage = slowest_stage(c, 10, layer_of(1, 2), comm, ends, ends_comm);
  EXPECT_DOUBLE_EQ(stage.compute, 10 * 3 + 3 + 7);
  EXPECT_DOUBLE_EQ(stage.tp_comm, 10 * 0.3 + 0.5 + 0.5);
  EXPECT_EQ(stage.layers, 10);
}

TEST(CostStage, WithAPipelineTheCostlierEndSetsThePace) {
  ParallelConfig c;
  c.pipeline = 4;
  const LayerComm comm{0.1, 0, 0.2};
  StageEndCompute ends;
  ends.first_forward = 1, ends.first_backward = 1, ends.last_forward = 2, ends.last_backward = 2;
  StageEndComm ends_comm{0.5, 0, 0};
  StageTime stage = slowest_stage(c, 10, layer_of(1, 2), comm, ends, ends_comm);
  EXPECT_DOUBLE_EQ(stage.compute, 30 + 4);  // the last stage: 4 > 2 + 0.5
  EXPECT_DOUBLE_EQ(stage.tp_comm, 3);
  ends_comm.first = 3;
  stage = slowest_stage(c, 10, layer_of(1, 2), comm, ends, ends_comm);
  EXPECT_DOUBLE_EQ(stage.compute, 30 + 2);  // now the first: 2 + 3 > 4
  EXPECT_DOUBLE_EQ(stage.tp_comm, 3 + 3);
  EXPECT_DOUBLE_EQ(stage.total(), 38);
}

}  // namespace
}  // namespace axo

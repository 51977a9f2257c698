// Each stage's time and the slowest stage (model/cost_stage.h).
#include "model/cost_stage.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

// Stages of the given layer counts.
std::vector<int64_t> split_of(std::vector<int64_t> counts) { return counts; }

struct Parts {
  LayerCompute layer;
  LayerComm comm{0.1, 0, 0.2};
  StageEndCompute ends;
  StageEndComm ends_comm;
  Parts() {
    layer.forward = 1, layer.backward = 2;  // a layer: 3 s of compute, 0.3 s exposed
    ends.first_forward = 1, ends.first_backward = 1, ends.last_forward = 2, ends.last_backward = 2;
    ends_comm = {0.5, 0, 0};
  }
  StageParts view() const { return {layer, comm, ends, ends_comm}; }
};

TEST(CostStage, OneStageRunsEverything) {
  const Parts p;
  const StageTime stage = slowest_stage(split_of({10}), p.view());
  EXPECT_DOUBLE_EQ(stage.compute, 10 * 3 + 2 + 4);
  EXPECT_DOUBLE_EQ(stage.tp_comm, 10 * 0.3 + 0.5);
  EXPECT_EQ(stage.layers, 10);
}

TEST(CostStage, WithEqualStagesTheCostlierEndSetsThePace) {
  Parts p;
  StageTime stage = slowest_stage(split_of({10, 10, 10, 10}), p.view());
  EXPECT_EQ(stage.stage, 3);  // the head: 4 > 2 + 0.5
  EXPECT_DOUBLE_EQ(stage.compute, 30 + 4);
  EXPECT_DOUBLE_EQ(stage.tp_comm, 3);
  p.ends_comm.first = 3;
  stage = slowest_stage(split_of({10, 10, 10, 10}), p.view());
  EXPECT_EQ(stage.stage, 0);  // now the embedding: 2 + 3 > 4
  EXPECT_DOUBLE_EQ(stage.compute, 30 + 2);
  EXPECT_DOUBLE_EQ(stage.tp_comm, 3 + 3);
  EXPECT_DOUBLE_EQ(stage.total(), 38);
}

TEST(CostStage, EachStageIsPricedByItsOwnLayers) {
  const Parts p;
  const std::vector<int64_t> split = split_of({8, 4});  // GPT-2 124M's split over 2 stages
  const StageTime first = stage_time(split, 0, p.view()), last = stage_time(split, 1, p.view());
  EXPECT_DOUBLE_EQ(first.total(), 8 * 3.3 + 2 + 0.5);
  EXPECT_DOUBLE_EQ(last.total(), 4 * 3.3 + 4);
  EXPECT_EQ(slowest_stage(split, p.view()).stage, 0);
  // A middle stage with the most layers is the slowest.
  const StageTime middle = slowest_stage(split_of({2, 5, 2}), p.view());
  EXPECT_EQ(middle.stage, 1);
  EXPECT_EQ(middle.layers, 5);
  EXPECT_DOUBLE_EQ(middle.total(), 5 * 3.3);
}

// Partial recompute: each stage's recomputed layers cost the layer, its other layers the kept one,
// so with unequal stages the share differs stage by stage.
TEST(CostStage, PartialRecomputePricesEachStagesOwnShare) {
  Parts p;
  p.layer.recompute = 1;  // a recomputed layer: 4 s of compute
  LayerCompute kept = p.layer;
  kept.recompute = 0;
  const LayerComm kept_comm{0.1, 0, 0.3};  // a shorter backward hides less
  StageParts parts = p.view();
  parts.kept = &kept, parts.kept_comm = &kept_comm;
  parts.recomputed = {4, 4, 2};  // the first 4 of chunks of 8, 5 and 2 layers
  const std::vector<int64_t> split = split_of({8, 5, 2});
  const StageTime first = stage_time(split, 0, parts), middle = stage_time(split, 1, parts);
  EXPECT_DOUBLE_EQ(first.compute, 4 * 4 + 4 * 3 + 2);
  EXPECT_DOUBLE_EQ(first.tp_comm, 4 * 0.3 + 4 * 0.4 + 0.5);
  EXPECT_DOUBLE_EQ(first.recomputed, 4);
  EXPECT_DOUBLE_EQ(middle.compute, 4 * 4 + 1 * 3);
  EXPECT_DOUBLE_EQ(stage_time(split, 2, parts).compute, 2 * 4 + 4);  // every layer of its chunk
}

}  // namespace
}  // namespace axo

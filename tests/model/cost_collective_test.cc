// Timing and recording one collective (model/cost_collective.h).
#include "model/cost_collective.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(CostCollective, TimedOverItsGroupAndRecordedWithItsLayer) {
  const TransformerSpec spec = load_model("gpt3-13b");
  const MachineProfile machine = load_machine("selene");  // 8 GPUs per node
  ParallelConfig c;
  c.x = 2, c.y = 8, c.data = 4;  // rank order xyzdp: Y neighbours 2 apart, 2·8 = 16 ranks span two nodes
  const LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, shapes};
  const Collective c1{CostScope::layer, CostPhase::backward, CollectiveOp::all_reduce, GridDim::y, 1e6, 2, "dX", "qkv",
                      Exposure::oar, 0.1};
  const TimedCollective timed = time_collective(in, c1);
  EXPECT_EQ(timed.group.size, 8);
  EXPECT_EQ(timed.group.ranks_per_node, 4);
  EXPECT_DOUBLE_EQ(timed.bytes, 2e6);
  EXPECT_DOUBLE_EQ(timed.seconds, collective_seconds(machine, CollectiveOp::all_reduce, timed.group, 2e6));
  std::vector<CostItem> items;
  record_collective(in, CostRecorder(&items, 10, 2), c1, timed, 0.25 * timed.seconds);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].name, "all_reduce dX (qkv)");
  EXPECT_EQ(items[0].group, GridDim::y);
  EXPECT_EQ(items[0].group_size, 8);
  EXPECT_EQ(items[0].exposed, 0.25 * timed.seconds);
  EXPECT_EQ(items[0].per_iteration, 10);
  // A group of one rank costs nothing.
  const Collective z{CostScope::layer, CostPhase::forward, CollectiveOp::all_gather, GridDim::z, 1e6, 2, "weights"};
  EXPECT_EQ(time_collective(in, z).seconds, 0);
}

TEST(CostCollective, HidingIsCappedByTheWindowAndScaledByEfficiency) {
  MachineProfile m;
  m.overlap_efficiency = 0.8;
  EXPECT_DOUBLE_EQ(hidden_seconds(m, 2.0, 1.0), 0.8);
  EXPECT_DOUBLE_EQ(hidden_seconds(m, 0.5, 1.0), 0.4);
}

TEST(CostCollective, InterferenceSlowsTheComputeACollectiveRunsBeside) {
  MachineProfile m;
  m.overlap_interference = 0.2;
  // 0.5 s under a 1 s window: the compute loses 0.2 of its speed for 0.5 s, 0.1 s exposed.
  EXPECT_DOUBLE_EQ(hidden_seconds(m, 0.5, 1.0), 0.4);
  // 2 s over a 1 s window: the second beyond it is exposed anyway; the slowed
  // compute (0.2 s) ends before the collective does.
  EXPECT_DOUBLE_EQ(hidden_seconds(m, 2.0, 1.0), 1.0);
  // 1.1 s over a 1 s window: the slowed compute (1.2 s) now ends last.
  EXPECT_NEAR(hidden_seconds(m, 1.1, 1.0), 0.9, 1e-12);
}

TEST(CostCollective, DataParallelCollectivesSpanDataAndContext) {
  const TransformerSpec spec = load_model("llama3-8b");
  const MachineProfile machine = load_machine("dgx-h100");  // 8 GPUs per node
  ParallelConfig c;
  c.y = 2, c.context = 2, c.data = 4;  // xyzcdp: context 2 apart, data 4 apart
  const LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, machine, c, shapes};
  const Collective gradients{CostScope::step, CostPhase::step, CollectiveOp::all_reduce, GridDim::data, 1e6, 2,
                             "gradients"};
  const TimedCollective timed = time_collective(in, gradients);
  EXPECT_EQ(timed.group.size, 8);            // data × context
  EXPECT_EQ(timed.group.ranks_per_node, 4);  // 2 context × 2 data ranks in each node
  std::vector<CostItem> items;
  record_collective(in, CostRecorder(&items, 1, 1), gradients, timed, timed.seconds);
  EXPECT_EQ(items.at(0).name, "all_reduce gradients over data x context");
  // Other groups are their own dimension alone.
  EXPECT_EQ(collective_group(c, GridDim::y, 8).size, 2);
  EXPECT_EQ(collective_group(c, GridDim::context, 8).size, 2);
}

}  // namespace
}  // namespace axo

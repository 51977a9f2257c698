// The optimizer step and offload traffic (model/cost_optimizer.h).
#include "model/cost_optimizer.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

TEST(CostOptimizer, OnTheDeviceAdamMoves28Plus4eBytesPerParameter) {
  const TransformerSpec spec = load_model("gpt3-13b");  // bf16: e = 2
  const MachineProfile machine = load_machine("selene");
  const ParallelConfig c;
  const LocalShapes shapes = local_shapes(spec, c);
  DataParallelStep dp;
  dp.local_params = dp.updated_params = 1e9;  // no ZeRO: the rank updates all it holds
  std::vector<CostItem> items;
  const OptimizerStep step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder(&items, 1, 1));
  EXPECT_DOUBLE_EQ(step.optimizer, memory_op_seconds(machine, 1e9 * 36, 1));
  EXPECT_EQ(step.offload, 0);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].name, "Adam on the device");
}

// With ZeRO each of the data ranks updates its 1/data shard (data_parallel_step's updated_params).
TEST(CostOptimizer, ZeroUpdatesOnlyTheShard) {
  const TransformerSpec spec = load_model("gpt3-13b");
  const MachineProfile machine = load_machine("selene");
  ParallelConfig c;
  c.data = 8, c.zero = 1;
  const LocalShapes shapes = local_shapes(spec, c);
  DataParallelStep dp;
  dp.local_params = 8e9, dp.updated_params = 1e9;
  const OptimizerStep step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder());
  EXPECT_DOUBLE_EQ(step.optimizer, memory_op_seconds(machine, 1e9 * 36, 1));
}

TEST(CostOptimizer, OffloadRunsAdamOnTheHostAndHidesTheDownloadUnderTheReduction) {
  const TransformerSpec spec = load_model("gpt3-13b");
  MachineProfile machine = load_machine("selene");
  machine.cpu_optimizer_params_per_s = 1e9, machine.device_to_host_GBps = 20, machine.host_to_device_GBps = 25;
  ParallelConfig c;
  c.offload = true;
  const LocalShapes shapes = local_shapes(spec, c);
  DataParallelStep dp;
  dp.local_params = dp.updated_params = 1e9;  // no ZeRO: the rank updates all it holds
  const double down = 2e9 / 20e9, up = 2e9 / 25e9;
  dp.all_reduce = dp.exposed = dp.last_exposed = 0.04;  // reduced after the backward: no window
  OptimizerStep step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder());
  EXPECT_DOUBLE_EQ(step.optimizer, 1.0);
  EXPECT_DOUBLE_EQ(step.offload, down - 0.04 + up);
  // Under the backward the download streams from the window's start: 0.03 s hidden there, 0.01 s
  // under the exposed end.
  dp.window = 0.03, dp.exposed = dp.last_exposed = 0.01;
  step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder());
  EXPECT_NEAR(step.offload, down - 0.04 + up, 1e-15);
  // Not under the updated parameters' all-gather (ZeRO), which follows the update, nor under an
  // earlier microbatch's reduce-scatter (ZeRO-2): those are in exposed, not in last_exposed.
  dp.exposed = 0.5;
  step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder());
  EXPECT_NEAR(step.offload, down - 0.04 + up, 1e-15);
  dp.window = 0, dp.all_reduce = dp.exposed = dp.last_exposed = 1;  // longer than the download: only the upload
  std::vector<CostItem> items;
  step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder(&items, 1, 1));
  EXPECT_DOUBLE_EQ(step.offload, up);
  ASSERT_FALSE(items.empty());  // --explain's row: both copies, what the step pays of them exposed
  EXPECT_EQ(items[0].name, "offload: gradients to host, weights back");
  EXPECT_DOUBLE_EQ(items[0].seconds, down + up);
  EXPECT_DOUBLE_EQ(items[0].exposed, step.offload);
}

// A faster reduction never makes the reduction and the offload together slower: what the download
// loses of the reduction to hide under, the reduction gives back.
TEST(CostOptimizer, AFasterReductionNeverSlowsTheOffloadedStep) {
  const TransformerSpec spec = load_model("gpt3-13b");
  MachineProfile machine = load_machine("selene");
  machine.device_to_host_GBps = 20;
  ParallelConfig c;
  c.offload = true;
  const LocalShapes shapes = local_shapes(spec, c);
  DataParallelStep dp;
  dp.local_params = dp.updated_params = 1e9, dp.window = 0.05;  // a download of 0.1 s
  double previous = 0;
  for (double exposed : {0.0, 0.01, 0.02, 0.05, 0.2}) {  // a slower and slower reduction in 4 buckets,
    dp.all_reduce = 4 * exposed, dp.exposed = dp.last_exposed = exposed;  // all but the last hidden
    const double paid = exposed + optimizer_step({spec, machine, c, shapes}, dp, CostRecorder()).offload;
    EXPECT_GE(paid, previous - 1e-15) << exposed;
    previous = paid;
  }
}

}  // namespace
}  // namespace axo

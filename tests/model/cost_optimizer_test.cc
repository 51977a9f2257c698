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

TEST(CostOptimizer, OffloadRunsAdamOnTheHostAndHidesTheDownloadUnderTheAllReduce) {
  const TransformerSpec spec = load_model("gpt3-13b");
  MachineProfile machine = load_machine("selene");
  machine.cpu_optimizer_params_per_s = 1e9, machine.device_to_host_GBps = 20, machine.host_to_device_GBps = 25;
  ParallelConfig c;
  c.offload = true;
  const LocalShapes shapes = local_shapes(spec, c);
  DataParallelStep dp;
  dp.local_params = dp.updated_params = 1e9;  // no ZeRO: the rank updates all it holds
  const double down = 2e9 / 20e9, up = 2e9 / 25e9;
  dp.all_reduce = 0.04;
  OptimizerStep step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder());
  EXPECT_DOUBLE_EQ(step.optimizer, 1.0);
  EXPECT_DOUBLE_EQ(step.offload, down - 0.04 + up);
  dp.all_reduce = 1;  // longer than the download: only the upload is exposed
  step = optimizer_step({spec, machine, c, shapes}, dp, CostRecorder());
  EXPECT_DOUBLE_EQ(step.offload, up);
}

}  // namespace
}  // namespace axo

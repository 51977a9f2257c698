// Separate gradient accumulation (model/cost_grad_accumulation.h).
#include "model/cost_grad_accumulation.h"

#include <gtest/gtest.h>

#include "model/cost_layer.h"
#include "model/cost_model.h"
#include "model/cost_stage_ends.h"
#include "model/presets.h"

namespace axo {
namespace {

struct Case {
  TransformerSpec spec = load_model("megatron-530b");  // fp16, tied embeddings
  MachineProfile machine = load_machine("selene");
  ParallelConfig config;
  LocalShapes shapes;
  explicit Case(GradAccumulation accumulation) {
    machine.grad_accumulation = accumulation;
    config.y = 8, config.pipeline = 35, config.data = 9, config.microbatch = 1;
    shapes = local_shapes(spec, config);
  }
  CostInputs inputs() const { return {spec, machine, config, shapes}; }
};

// Megatron-LM's 2021 hook, main_grad.add_(grad), in fp16 (its buffer in the model's dtype): 2 + 2 + 2
// bytes per gradient element of the rank's block, every microbatch; reducing in fp32, 2 + 4 + 4.
// A fused stack adds nothing.
TEST(CostGradAccumulation, ABlocksGradientsAreReadAndTheBufferReadAndWritten) {
  Case separate(GradAccumulation::separate);
  const double block = separate.shapes.block_weights();
  EXPECT_NEAR(grad_accumulation_seconds(separate.inputs(), CostRecorder(), CostScope::layer, block),
              memory_op_seconds(separate.machine, block * 6, 1), 1e-15);
  separate.machine.reduce_dtype = ReduceDtype::fp32;
  EXPECT_NEAR(grad_accumulation_seconds(separate.inputs(), CostRecorder(), CostScope::layer, block),
              memory_op_seconds(separate.machine, block * 10, 1), 1e-15);
  const Case fused(GradAccumulation::fused);
  EXPECT_EQ(grad_accumulation_seconds(fused.inputs(), CostRecorder(), CostScope::layer, block), 0);
}

// The layer's backward grows by it and the explanation lists it; the embedding accumulates on the
// first stage and the head on the last.
TEST(CostGradAccumulation, LayersAndBothEndsAccumulate) {
  const Case separate(GradAccumulation::separate), fused(GradAccumulation::fused);
  std::vector<CostItem> items;
  const LayerCompute with = layer_compute(separate.inputs(), CostRecorder(&items, 1, 1));
  const LayerCompute without = layer_compute(fused.inputs(), CostRecorder());
  EXPECT_NEAR(with.backward - without.backward,
              memory_op_seconds(separate.machine, separate.shapes.block_weights() * 6, 1), 1e-12);
  bool listed = false;
  for (const CostItem& item : items) listed |= item.name.find("gradient accumulation") != std::string::npos;
  EXPECT_TRUE(listed);
  const StageEndCompute ends = stage_end_compute(separate.inputs(), CostRecorder());
  const StageEndCompute plain = stage_end_compute(fused.inputs(), CostRecorder());
  const double head = memory_op_seconds(separate.machine, separate.shapes.head_weights() * 6, 1);
  EXPECT_NEAR(ends.first_backward - plain.first_backward, head, 1e-12);
  EXPECT_NEAR(ends.last_backward - plain.last_backward, head, 1e-12);
}

// Narayanan et al.'s 530B: 280 microbatches of 1.9 billion gradient elements a rank cost seconds
// an iteration (about 4% of its 54 s).
TEST(CostGradAccumulation, ItCostsNarayanans530BSeconds) {
  const Case separate(GradAccumulation::separate), fused(GradAccumulation::fused);
  ParallelConfig c = separate.config;
  c.recompute = Recompute::full, c.interleave = 3, c.overlap = false;
  TransformerSpec spec = separate.spec;
  spec.global_batch = 2520;
  const double extra = CostModel(spec, separate.machine).evaluate(c).iter_time -
                       CostModel(spec, fused.machine).evaluate(c).iter_time;
  EXPECT_GT(extra, 1.5);
  EXPECT_LT(extra, 3.5);
}

}  // namespace
}  // namespace axo

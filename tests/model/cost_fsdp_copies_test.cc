// The copies an FSDP stack makes around its collectives (model/cost_fsdp_copies.h).
#include "model/cost_fsdp_copies.h"

#include <gtest/gtest.h>

#include <utility>

#include "model/cost_layer.h"
#include "model/cost_stage_ends.h"
#include "model/presets.h"

namespace axo {
namespace {

struct Case {
  TransformerSpec spec = load_model("gpt3-13b");
  MachineProfile machine = load_machine("dgx-h100");
  ParallelConfig config;
  LocalShapes shapes;
  Case(FsdpCopies copies, ReduceDtype reduce) {
    machine.fsdp_copies = copies, machine.reduce_dtype = reduce;
    spec.precision = Precision::bf16;
    config.z = 8, config.microbatch = 16;
    shapes = local_shapes(spec, config);
  }
  CostInputs inputs() const { return {spec, machine, config, shapes}; }
  double block() const { return shapes.block_weights(); }
};

// FSDP1 in bf16 reducing in fp32 (Composer's DEFAULT): concatenate 2+2, cast 2+4, pre-divide 4+4
// bytes per element before the reduce-scatter; nothing after a gather. Reducing in bf16 (PURE):
// concatenate and pre-divide, 2+2 each. FSDP2: 2+2 out of each gather, 2+4 (or 2+2) into the
// reduce-scatter buffer. Megatron's buffers (none): nothing.
TEST(CostFsdpCopies, BytesPerElementFollowTheStacksCode) {
  const FsdpCopyBytes flat32 = fsdp_copy_bytes(Case(FsdpCopies::flat_parameter, ReduceDtype::fp32).inputs(), 2);
  EXPECT_DOUBLE_EQ(flat32.after_gather, 0);
  EXPECT_DOUBLE_EQ(flat32.before_reduce, 4 + 6 + 8);
  EXPECT_DOUBLE_EQ(fsdp_copy_bytes(Case(FsdpCopies::flat_parameter, ReduceDtype::compute).inputs(), 2).before_reduce, 8);
  const FsdpCopyBytes per32 = fsdp_copy_bytes(Case(FsdpCopies::per_parameter, ReduceDtype::fp32).inputs(), 2);
  EXPECT_DOUBLE_EQ(per32.after_gather, 4);
  EXPECT_DOUBLE_EQ(per32.before_reduce, 6);
  EXPECT_DOUBLE_EQ(fsdp_copy_bytes(Case(FsdpCopies::per_parameter, ReduceDtype::compute).inputs(), 2).before_reduce, 4);
  // FSDP2 gathering fp8 weights (stack.fp8_weights gathered) copies them out in 1 + 1 bytes.
  EXPECT_DOUBLE_EQ(fsdp_copy_bytes(Case(FsdpCopies::per_parameter, ReduceDtype::fp32).inputs(), 1).after_gather, 2);
  const FsdpCopyBytes none = fsdp_copy_bytes(Case(FsdpCopies::none, ReduceDtype::fp32).inputs(), 2);
  EXPECT_DOUBLE_EQ(none.after_gather + none.before_reduce, 0);
}

// A layer's backward grows by the block's copies at the achieved HBM bandwidth (FSDP2: two
// gathers and one reduce-scatter per microbatch), and the explanation lists them.
TEST(CostFsdpCopies, LayerBackwardGrowsByTheBlocksCopies) {
  const Case none(FsdpCopies::none, ReduceDtype::fp32), per(FsdpCopies::per_parameter, ReduceDtype::fp32);
  std::vector<CostItem> items;
  const LayerCompute with = layer_compute(per.inputs(), CostRecorder(&items, 1, 1));
  const LayerCompute without = layer_compute(none.inputs(), CostRecorder());
  const double bytes = per.block() * (2 * 4 + 6);
  EXPECT_NEAR(with.backward - without.backward, memory_op_seconds(per.machine, bytes, 3), 1e-12);
  EXPECT_DOUBLE_EQ(with.forward, without.forward);
  bool listed = false;
  for (const CostItem& item : items) listed |= item.name.find("FSDP copies") != std::string::npos;
  EXPECT_TRUE(listed);
}

// Without Z sharding nothing is gathered; with zero 2 over data the gradients are still
// reduce-scattered every microbatch (MosaicML's SHARD_GRAD_OP), with zero 0 they are not.
TEST(CostFsdpCopies, OnlyShardedWeightsAndGradientsAreCopied) {
  Case c(FsdpCopies::per_parameter, ReduceDtype::fp32);
  c.config.z = 1, c.config.data = 8, c.config.zero = 2;
  c.shapes = local_shapes(c.spec, c.config);
  EXPECT_NEAR(fsdp_copy_seconds(c.inputs(), CostRecorder(), CostScope::layer, c.block(), 2, 2),
              memory_op_seconds(c.machine, c.block() * 6, 1), 1e-12);
  c.config.zero = 0;
  EXPECT_EQ(fsdp_copy_seconds(c.inputs(), CostRecorder(), CostScope::layer, c.block(), 2, 2), 0);
}

// The LM head's FSDP unit is gathered once per microbatch: the last stage's backward grows by it;
// a tied embedding is that unit (gpt3-13b), an untied one (llama3-8b) a unit of its own.
TEST(CostFsdpCopies, TheHeadAndAnUntiedEmbeddingAreCopied) {
  Case none(FsdpCopies::none, ReduceDtype::compute), flat(FsdpCopies::flat_parameter, ReduceDtype::compute);
  auto grown = [&](const Case& a, const Case& b) {
    const StageEndCompute with = stage_end_compute(a.inputs(), CostRecorder());
    const StageEndCompute without = stage_end_compute(b.inputs(), CostRecorder());
    return std::pair{with.first_backward - without.first_backward, with.last_backward - without.last_backward};
  };
  const double head = flat.shapes.head_weights();
  EXPECT_NEAR(grown(flat, none).second, memory_op_seconds(flat.machine, head * 8, 1), 1e-12);
  EXPECT_EQ(grown(flat, none).first, 0);  // tied: the head's unit
  for (Case* c : {&none, &flat}) {
    c->spec = load_model("llama3-8b");
    c->spec.precision = Precision::bf16;
    c->shapes = local_shapes(c->spec, c->config);
  }
  const double embedding = flat.shapes.head_weights();
  EXPECT_NEAR(grown(flat, none).first, memory_op_seconds(flat.machine, embedding * 8, 1), 1e-12);
}

}  // namespace
}  // namespace axo

// The data-parallel gradient all-reduce (model/cost_data_parallel.h).
#include "model/cost_data_parallel.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/axo_parameters.h"
#include "model/cost_collective.h"
#include "model/cost_split.h"
#include "model/memory_model.h"
#include "model/presets.h"

namespace axo {
namespace {

// Selene with the data-parallel reduction overlapped (its preset reduces after the backward, as
// Megatron-LM did: tested on its own below).
MachineProfile overlapped_selene() {
  MachineProfile selene = load_machine("selene");
  selene.grad_reduce = GradReduce::overlapped;
  return selene;
}

struct Case {
  TransformerSpec spec = load_model("gpt3-13b");  // tied embeddings
  MachineProfile machine = overlapped_selene();
  ParallelConfig config;
  // The reduction of the fullest stage's gradients under its backward: with one stage, of `layers`
  // layers; with several, split_pipeline's (whose fullest stage must have `layers`).
  DataParallelStep run(int64_t layers, std::vector<CostItem>* items = nullptr) const {
    const LocalShapes shapes = local_shapes(spec, config);
    const CostInputs in{spec, machine, config, shapes};
    std::vector<int64_t> split = {layers};
    if (config.pipeline > 1) {
      split = layers_by_stage(split_pipeline(spec, config.pipeline, config.interleave));
      EXPECT_EQ(split[size_t(fullest_stage(spec, config, split).stage)], layers);
    }
    return data_parallel_step(in, split, layer_compute(in, CostRecorder()), CostRecorder(items, 1, 1));
  }
};

TEST(CostDataParallel, OneReplicaAndOneStageSendNothing) {
  Case t;
  const DataParallelStep dp = t.run(40);
  EXPECT_EQ(dp.all_reduce, 0);
  EXPECT_EQ(dp.exposed, 0);
  EXPECT_DOUBLE_EQ(dp.local_params, double(first_stage_params(t.spec, t.config)));
}

// One bucket per layer (axo's executor, FSDP's blocks: the default).
TEST(CostDataParallel, AllButTheLastBucketHidesUnderBackward) {
  Case t;
  EXPECT_EQ(t.machine.grad_buckets, GradBuckets::per_layer);
  t.config.data = 8, t.config.y = 8;  // on one node: data ranks 8 apart span 8 nodes
  const DataParallelStep one_layer = t.run(1);
  EXPECT_GT(one_layer.all_reduce, 0);
  EXPECT_DOUBLE_EQ(one_layer.exposed, one_layer.all_reduce);  // one bucket: nothing to hide under
  const DataParallelStep many = t.run(40);
  EXPECT_LT(many.exposed, many.all_reduce);
  EXPECT_GE(many.exposed, many.all_reduce / 40 * (1 - 1e-12));  // the last bucket stays exposed
  t.machine.overlap_efficiency = 0;
  EXPECT_DOUBLE_EQ(t.run(40).exposed, t.run(40).all_reduce);
}

// Each bucket pays the group's latency: the reduction takes buckets × the
// time of one bucket's share. Megatron-Core's buckets hold max(40M, 1M × data)
// parameters, PyTorch DDP's 25 MiB of gradients.
TEST(CostDataParallel, EachBucketPaysTheLatency) {
  Case t;
  t.machine.grad_buckets = GradBuckets::megatron_core;
  t.config.data = 8, t.config.y = 8;
  const DataParallelStep dp = t.run(40);
  const GroupPlacement group = collective_group(t.config, GridDim::data, t.machine.gpus_per_node);
  const double bytes = dp.local_params * 2;  // bf16 gradients
  auto in_buckets = [&](double buckets) {
    return buckets * collective_seconds(t.machine, CollectiveOp::all_reduce, group, bytes / buckets);
  };
  const double buckets = std::ceil(dp.local_params / 40e6);
  EXPECT_NEAR(dp.all_reduce, in_buckets(buckets), 1e-12);
  EXPECT_GT(dp.all_reduce, in_buckets(1));  // more latency than one collective
  std::vector<CostItem> items;  // the explanation says how many
  t.run(40, &items);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].name, "all_reduce gradients in " + std::to_string(int64_t(buckets)) + " buckets");
  EXPECT_GT(buckets, 1);
  t.machine.grad_buckets = GradBuckets::per_layer;
  EXPECT_NEAR(t.run(40).all_reduce, in_buckets(40), 1e-12);
  t.machine.grad_buckets = GradBuckets::pytorch_ddp;
  EXPECT_NEAR(t.run(40).all_reduce, in_buckets(std::ceil(bytes / (25.0 * (1 << 20)))), 1e-12);
  // 64 data-parallel ranks: Megatron-Core's buckets grow to 64M parameters.
  t.machine.grad_buckets = GradBuckets::megatron_core;
  t.config.data = 64, t.config.y = 1;
  const DataParallelStep wide = t.run(40);
  const GroupPlacement wide_group = collective_group(t.config, GridDim::data, t.machine.gpus_per_node);
  const double wide_buckets = std::ceil(wide.local_params / 64e6);
  EXPECT_NEAR(wide.all_reduce,
              wide_buckets * collective_seconds(t.machine, CollectiveOp::all_reduce, wide_group,
                                                wide.local_params * 2 / wide_buckets),
              1e-12);
}

// stack.grad_reduce after_backward (Megatron-LM's train_step): the all-reduce, or the distributed
// optimizer's reduce-scatter and all-gather, waits for the whole backward, one collective that
// hides under nothing.
TEST(CostDataParallel, AfterTheBackwardNothingHides) {
  Case t;
  t.config.data = 8, t.config.y = 8;
  const DataParallelStep overlapped = t.run(40);
  t.machine.grad_reduce = GradReduce::after_backward;
  const DataParallelStep after = t.run(40);
  const GroupPlacement group = collective_group(t.config, GridDim::data, t.machine.gpus_per_node);
  EXPECT_DOUBLE_EQ(after.all_reduce, collective_seconds(t.machine, CollectiveOp::all_reduce, group, after.local_params * 2));
  EXPECT_GT(overlapped.all_reduce, after.all_reduce);  // the buckets' latencies
  EXPECT_LT(overlapped.exposed, overlapped.all_reduce);
  EXPECT_DOUBLE_EQ(after.exposed, after.all_reduce);
  t.config.zero = 1;
  std::vector<CostItem> items;
  const DataParallelStep zero = t.run(40, &items);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_DOUBLE_EQ(zero.exposed, items[0].seconds + items[1].seconds);
  EXPECT_EQ(load_machine("selene").grad_reduce, GradReduce::after_backward);
}

TEST(CostDataParallel, TiedEmbeddingsAcrossStagesAddTheirAllReduce) {
  Case t;
  t.config.pipeline = 2, t.config.data = 2;
  std::vector<CostItem> items;
  const DataParallelStep dp = t.run(20, &items);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].name, "all_reduce gradients in 20 buckets");  // one per layer of the stage
  EXPECT_EQ(items[1].name, "all_reduce tied embedding gradient (first and last stage)");
  EXPECT_DOUBLE_EQ(items[1].bytes, 50257.0 * 5120 * 2);
  EXPECT_GT(items[1].seconds, 0);
  EXPECT_LT(items[0].exposed, items[0].seconds);  // bucketed under the backward of 19 layers
  EXPECT_NEAR(dp.exposed, items[0].exposed + items[1].exposed, 1e-15);
  const double tied = items[1].seconds;
  t.spec.tied_embeddings = false;
  EXPECT_NEAR(t.run(20).exposed, dp.exposed - tied, 1e-12);
  t.spec.tied_embeddings = true;
  t.machine.reduce_dtype = ReduceDtype::fp32;  // Megatron-LM's fp32 main_grad: 4 bytes an element
  items.clear();
  t.run(20, &items);
  EXPECT_DOUBLE_EQ(items[1].bytes, 50257.0 * 5120 * 4);
}

// The first and last stages are the pipeline group's ends: across nodes where a pipeline group
// straddles one. 3 stages 2 apart on 24 GPUs of 8-GPU nodes (order xyzcpd): ranks 6, 8, 10 are a
// pipeline group, and its ends 6 and 10 are on two nodes.
TEST(CostDataParallel, TheTiedPairIsThePipelineGroupsEnds) {
  Case t;
  t.config.pipeline = 3, t.config.data = 4, t.config.x = 2, t.config.order = parse_order("xyzcpd", "test");
  ASSERT_EQ(t.config.stride(GridDim::pipeline), 2);
  std::vector<CostItem> items;
  t.run(14, &items);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].ranks_per_node, 1);
}

// The gradients' data x context group is the same ranks whichever of the two is inside the
// other: context 3 and data 8 on 24 dgx-h100 GPUs are all 24, 8 to a node, in both orders.
TEST(CostDataParallel, DataTimesContextIsOneGroupInEitherOrder) {
  Case t;
  t.machine = load_machine("dgx-h100");
  t.spec = load_model("llama3-8b");
  t.config.context = 3, t.config.data = 8, t.config.zero = 1;
  std::vector<std::vector<CostItem>> items(2);
  int k = 0;
  for (const char* order : {"cdxyzp", "dcxyzp"}) {
    t.config.order = parse_order(order, "test");
    t.run(32, &items[k++]);
  }
  ASSERT_FALSE(items[0].empty());
  ASSERT_EQ(items[0].size(), items[1].size());
  for (size_t i = 0; i < items[0].size(); ++i) {
    EXPECT_EQ(items[0][i].ranks_per_node, 8) << items[0][i].name;
    EXPECT_DOUBLE_EQ(items[0][i].seconds, items[1][i].seconds) << items[0][i].name;
  }
}

// zero >= 1: a reduce-scatter of the gradients and an all-gather of the
// updated parameters, each the all-reduce's bytes over two (ring formulas,
// REFERENCE-DATA.md), both listed with their exposed parts.
TEST(CostDataParallel, ZeroReduceScattersAndAllGathers) {
  Case t;
  t.config.data = 8, t.config.y = 8;
  std::vector<CostItem> plain_items, items;
  const DataParallelStep plain = t.run(40, &plain_items);
  t.config.zero = 1;
  const DataParallelStep zero = t.run(40, &items);
  ASSERT_EQ(plain_items.size(), 1u);
  EXPECT_EQ(plain_items[0].name, "all_reduce gradients in 40 buckets");  // one per layer
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].name, "reduce_scatter gradients in 40 buckets");
  EXPECT_EQ(items[1].name, "all_gather updated parameters in 40 buckets");
  for (const CostItem& item : items) {
    EXPECT_EQ(item.group, GridDim::data);
    EXPECT_DOUBLE_EQ(item.bytes, plain_items[0].bytes);  // each moves the shard's whole gradient in its ring
    EXPECT_GT(item.exposed, 0);                          // the last bucket is exposed
    EXPECT_LT(item.exposed, item.seconds);               // the rest hides
  }
  EXPECT_DOUBLE_EQ(zero.exposed, items[0].exposed + items[1].exposed);
  // What offload's download can end under: the gradients' reduction, not the gather after the update.
  EXPECT_DOUBLE_EQ(zero.last_exposed, items[0].exposed);
  EXPECT_DOUBLE_EQ(plain.last_exposed, plain_items[0].exposed);
  EXPECT_DOUBLE_EQ(zero.updated_params, zero.local_params / 8);
  EXPECT_DOUBLE_EQ(plain.updated_params, plain.local_params);
  // zero=2 reduce-scatters after every microbatch: never less exposed than zero=1. Its rows add up
  // to what the iteration pays: the last microbatch's under the backward once, each earlier one's
  // under the next microbatch m - 1 times (gpt3-13b's batch of 1024 over 8 ranks: 128 microbatches).
  t.config.zero = 2;
  std::vector<CostItem> zero2_items;
  const DataParallelStep zero2 = t.run(40, &zero2_items);
  EXPECT_GE(zero2.exposed, zero.exposed);
  ASSERT_EQ(zero2_items.size(), 3u);
  EXPECT_EQ(zero2_items[1].name, "reduce_scatter earlier gradients in 40 buckets");
  EXPECT_EQ(zero2_items[1].per_iteration, 127);
  EXPECT_LE(zero2_items[1].exposed, zero2_items[1].seconds);
  double rows = 0;
  for (const CostItem& item : zero2_items) rows += item.exposed * item.per_iteration;
  EXPECT_NEAR(rows, zero2.exposed, 1e-12);
}

// fp8 weights kept as the model's own (stack.fp8_weights: primary) are
// all-gathered in fp8, 1 byte per linear weight (Megatron-Core's
// --fp8-param-gather); the embedding, LM head and norms in bf16. Transient fp8
// copies leave the gather in bf16; the gradients' reduce-scatter never changes.
TEST(CostDataParallel, Fp8PrimaryWeightsAreGatheredInFp8) {
  Case t;
  t.spec = load_model("llama3-8b");
  t.spec.precision = Precision::fp8;
  t.machine = load_machine("dgx-h100");
  t.config.data = 8, t.config.zero = 1;
  std::vector<CostItem> transient, primary;
  t.machine.fp8_weights = Fp8Weights::transient;
  const DataParallelStep dp = t.run(32, &transient);
  t.machine.fp8_weights = Fp8Weights::primary;
  t.run(32, &primary);
  ASSERT_EQ(transient.size(), 2u);
  ASSERT_EQ(primary.size(), 2u);
  EXPECT_DOUBLE_EQ(transient[1].bytes, dp.local_params * 2);
  const double linear_weights = 32 * local_shapes(t.spec, t.config).block_weights();
  EXPECT_NEAR(primary[1].bytes, dp.local_params * 2 - linear_weights, 1e-6 * primary[1].bytes);
  EXPECT_LT(primary[1].seconds, transient[1].seconds);
  EXPECT_DOUBLE_EQ(primary[0].bytes, transient[0].bytes);
  t.spec.precision = Precision::bf16;  // bf16 training has no fp8 weights to gather
  std::vector<CostItem> bf16;
  t.run(32, &bf16);
  EXPECT_DOUBLE_EQ(bf16[1].bytes, transient[1].bytes);
}

// The shard each rank updates spans data × context (Megatron's distributed
// optimizer over the data-parallel group with context parallel), and so does
// the reduce-scatter's group.
TEST(CostDataParallel, ZeroShardsOverDataTimesContext) {
  Case t;
  t.spec = load_model("llama3-8b");
  t.config.data = 4, t.config.context = 2, t.config.y = 8, t.config.zero = 1;
  std::vector<CostItem> items;
  const DataParallelStep dp = t.run(32, &items);
  EXPECT_DOUBLE_EQ(dp.updated_params, dp.local_params / 8);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].group_size, 8);
  EXPECT_NE(items[0].name.find("over data x context"), std::string::npos) << items[0].name;
}

// axo's executor (stack.activations: axo) sums its linears' chunks over data, and what it keeps
// whole over Z (norms, biases, the embedding: model/axo_parameters.h) over z × data
// (parallel_gpt.cc's GradientGroup::z_and_data), the norms under sequence parallelism over
// y × z × data; each is a reduction of its own, every bucket paying its group's latency.
TEST(CostDataParallel, AxosExecutorSumsWhatItKeepsWholeOverZOverZAndData) {
  Case t;
  t.spec = load_model("gpt2-124m");
  t.machine.activations = ActivationLayout::axo;
  t.config.z = 2, t.config.data = 4;
  std::vector<CostItem> items;
  const DataParallelStep dp = t.run(12, &items);
  const AxoParams held = axo_stage_params(t.spec, t.config, 12, 0);
  EXPECT_DOUBLE_EQ(dp.local_params, held.total());
  ASSERT_EQ(items.size(), 2u);
  const double e = reduced_gradient_bytes({t.spec, t.machine, t.config, local_shapes(t.spec, t.config)});
  EXPECT_EQ(items[0].name, "all_reduce gradients in 12 buckets");
  EXPECT_EQ(items[0].group_size, 4);
  EXPECT_DOUBLE_EQ(items[0].bytes, held.linear * e);
  EXPECT_EQ(items[1].name, "all_reduce Z-replicated gradients over z x data in 12 buckets");
  EXPECT_EQ(items[1].group, GridDim::z);
  EXPECT_EQ(items[1].group_size, 8);
  EXPECT_DOUBLE_EQ(items[1].bytes, (held.rows + held.other) * e);
  EXPECT_DOUBLE_EQ(dp.all_reduce, items[0].seconds + items[1].seconds);
  EXPECT_NEAR(dp.exposed, items[0].exposed + items[1].exposed, 1e-15);
  // Sequence parallelism: the rows (norms, learned positions) over y as well.
  t.config.y = 2, t.config.sequence_parallel = true;
  items.clear();
  t.run(12, &items);
  const AxoParams sp = axo_stage_params(t.spec, t.config, 12, 0);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_DOUBLE_EQ(items[1].bytes, sp.other * e);
  EXPECT_EQ(items[2].group, GridDim::y);
  EXPECT_EQ(items[2].group_size, 16);
  EXPECT_DOUBLE_EQ(items[2].bytes, sp.rows * e);
}

// With ZeRO the executor all-reduces what it keeps whole over Z over z first, then reduce-scatters
// every gradient over data and gathers the updated parameters (zero_optimizer.cc).
TEST(CostDataParallel, AxosExecutorUnderZeroSumsOverZBeforeTheScatter) {
  Case t;
  t.spec = load_model("gpt2-124m");
  t.machine.activations = ActivationLayout::axo;
  t.config.z = 2, t.config.data = 4, t.config.zero = 1;
  std::vector<CostItem> items;
  const DataParallelStep dp = t.run(12, &items);
  const AxoParams held = axo_stage_params(t.spec, t.config, 12, 0);
  const double e = reduced_gradient_bytes({t.spec, t.machine, t.config, local_shapes(t.spec, t.config)});
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].name, "all_reduce Z-replicated gradients in 12 buckets");
  EXPECT_EQ(items[0].group_size, 2);
  EXPECT_DOUBLE_EQ(items[0].bytes, (held.rows + held.other) * e);
  EXPECT_EQ(items[1].name, "reduce_scatter gradients in 12 buckets");
  EXPECT_DOUBLE_EQ(items[1].bytes, held.total() * e);
  EXPECT_EQ(items[2].name, "all_gather updated parameters in 12 buckets");
  EXPECT_DOUBLE_EQ(dp.all_reduce, items[0].seconds + items[1].seconds);
  EXPECT_DOUBLE_EQ(dp.updated_params, held.total() / 4);
}

// The executor's pipeline ends sum the tied embedding's V'/y rows of h/x, whole over Z; with ZeRO
// the data ranks' piece of it.
TEST(CostDataParallel, AxosExecutorSumsItsTiedEmbeddingRows) {
  Case t;
  t.spec = load_model("gpt2-124m");
  t.machine.activations = ActivationLayout::axo;
  t.config.z = 2, t.config.data = 2, t.config.pipeline = 2;
  const auto tied_bytes = [&] {
    std::vector<CostItem> items;
    t.run(8, &items);
    for (const CostItem& item : items) {
      if (item.name.find("tied embedding") != std::string::npos) return item.bytes;
    }
    return -1.0;
  };
  const double e = reduced_gradient_bytes({t.spec, t.machine, t.config, local_shapes(t.spec, t.config)});
  EXPECT_DOUBLE_EQ(tied_bytes(), axo_vocabulary_params(t.spec, t.config) * e);
  t.config.zero = 1;
  EXPECT_DOUBLE_EQ(tied_bytes(), std::ceil(axo_vocabulary_params(t.spec, t.config) / 2) * e);
}

}  // namespace
}  // namespace axo

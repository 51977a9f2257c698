// fp8 GEMMs, casts, amax reductions and weight copies (model/cost_fp8.h).
#include "model/cost_fp8.h"

#include <gtest/gtest.h>

#include "model/cost_collective.h"
#include "model/cost_layer.h"
#include "model/cost_model.h"
#include "model/gemm_model.h"
#include "model/memory_model.h"
#include "model/presets.h"

namespace axo {
namespace {

TransformerSpec fp8_model(const char* name) {
  TransformerSpec spec = load_model(name);
  spec.precision = Precision::fp8;
  return spec;
}

// A large GEMM is compute-bound: at the fp8 rate, 989/1979 of bf16's time on
// an H100, with bf16's efficiency on that shape.
TEST(CostFp8, LinearGemmsRunAtTheFp8Rate) {
  const MachineProfile h100 = load_machine("dgx-h100");
  const double m = 16384, n = 8192, k = 8192;
  const double bf16 = linear_gemm_seconds(h100, Precision::bf16, m, n, k);
  EXPECT_DOUBLE_EQ(bf16, gemm_seconds(h100, Precision::bf16, m, n, k));
  const double fp8 = linear_gemm_seconds(h100, Precision::fp8, m, n, k);
  EXPECT_NEAR(fp8 / bf16, 989.0 / 1979.0, 0.01);
  // Flops at the fp8 peak times the bf16 efficiency curve, nothing faster.
  EXPECT_GT(fp8, 2 * m * n * k / (1979e12 * h100.gemm_max_efficiency));
}

TEST(CostFp8, TensorsStayBf16) {
  EXPECT_EQ(tensor_precision(Precision::fp8), Precision::bf16);
  EXPECT_EQ(tensor_precision(Precision::fp16), Precision::fp16);
  EXPECT_EQ(bytes_per_element(Precision::fp8), 2);
}

TEST(CostFp8, AMachineWithoutAnFp8RateRefusesIt) {
  EXPECT_EQ(precision_problem(Precision::fp8, load_machine("dgx-h100")), "");
  const std::string problem = precision_problem(Precision::fp8, load_machine("selene"));
  EXPECT_NE(problem.find("machine 'selene' has no fp8 rate"), std::string::npos) << problem;
  EXPECT_NE(problem.find("peak_tflops.fp8"), std::string::npos) << problem;
  EXPECT_EQ(precision_problem(Precision::bf16, load_machine("selene")), "");
}

// A profile without a bf16 or fp16 rate refuses that precision as it does fp8, naming the field and
// the file: no precision is priced at another's rate. fp8 needs bf16's too (its tensors are bf16).
TEST(CostFp8, AMachineWithoutABf16OrFp16RateRefusesIt) {
  MachineProfile fp32_only = load_machine("selene");
  fp32_only.peak_tflops_bf16 = fp32_only.peak_tflops_fp16 = 0;
  EXPECT_EQ(precision_problem(Precision::bf16, fp32_only, "m.yaml"),
            "precision bf16: machine 'selene' has no bf16 rate (peak_tflops.bf16 in its profile m.yaml); it prices fp32");
  EXPECT_EQ(precision_problem(Precision::fp16, fp32_only),
            "precision fp16: machine 'selene' has no fp16 rate (peak_tflops.fp16 in its profile); it prices fp32");
  EXPECT_EQ(precision_problem(Precision::fp32, fp32_only), "");
  MachineProfile fp8_without_bf16 = load_machine("dgx-h100");
  fp8_without_bf16.peak_tflops_bf16 = 0;
  EXPECT_EQ(precision_problem(Precision::fp8, fp8_without_bf16),
            "precision fp8: machine 'dgx-h100' has no bf16 rate (peak_tflops.bf16 in its profile); it prices fp32, fp16");
}

// Cast on their own (stack.fp8_casts separate), each linear's input [T × in]
// forward and output gradient [T × out] backward: read in bf16, written as fp8
// and its fp8 transpose, 4 bytes an element.
TEST(CostFp8, CastsMoveFourBytesPerInputAndGradientElement) {
  const TransformerSpec spec = fp8_model("llama3-8b");  // h 4096, ffn 14336, 8 KV heads
  MachineProfile h100 = load_machine("dgx-h100");
  h100.fp8_casts = Fp8Casts::separate;
  ParallelConfig c;
  const LocalShapes shapes = local_shapes(spec, c);
  std::vector<CostItem> items;
  const Fp8LayerCost casts = fp8_layer_casts({spec, h100, c, shapes}, CostRecorder(&items, 1, 1));
  const double T = 8192;
  const double inputs = T * (4096 + 4096 + 4096 + 14336);           // qkv, proj, up, down inputs
  const double gradients = T * (6144 + 4096 + 2 * 14336 + 4096);     // their outputs
  ASSERT_EQ(items.size(), 2u);
  EXPECT_DOUBLE_EQ(items[0].bytes, 4 * inputs);
  EXPECT_DOUBLE_EQ(items[1].bytes, 4 * gradients);
  EXPECT_DOUBLE_EQ(casts.forward, memory_op_seconds(h100, 4 * inputs, 4));
  EXPECT_DOUBLE_EQ(casts.backward, memory_op_seconds(h100, 4 * gradients, 4));
  TransformerSpec bf16 = spec;
  bf16.precision = Precision::bf16;
  EXPECT_EQ(fp8_layer_casts({bf16, h100, c, shapes}, CostRecorder()).forward, 0);
}

// Under sequence parallelism a tensor the layer gathers over Y (the plain
// layers' inputs, the transposed layers' output gradients) is cast on the
// rank's own m/y rows (read bf16, write fp8: 3 bytes) and its gathered fp8
// copy transposed in backward (read and write 1 byte); the rest as above.
TEST(CostFp8, SequenceParallelCastsBeforeTheGatherAndTransposesAfter) {
  const TransformerSpec spec = fp8_model("llama3-8b");
  MachineProfile h100 = load_machine("dgx-h100");
  h100.fp8_casts = Fp8Casts::separate;
  ParallelConfig c;
  c.y = 8, c.sequence_parallel = true;
  const LocalShapes shapes = local_shapes(spec, c);
  std::vector<CostItem> items;
  const Fp8LayerCost casts = fp8_layer_casts({spec, h100, c, shapes}, CostRecorder(&items, 1, 1));
  const double T = 8192, y = 8;
  const double gathered_inputs = T * (4096 + 4096);              // qkv, mlp_up: [T × h]
  const double local_inputs = T * (4096 + 14336) / y;            // attn_out, mlp_down: [T × in/y]
  const double gathered_gradients = T * (4096 + 4096);           // attn_out, mlp_down outputs: [T × h]
  const double local_gradients = T * (6144 + 2 * 14336) / y;     // qkv, mlp_up outputs: [T × out/y]
  ASSERT_EQ(items.size(), 2u);
  EXPECT_DOUBLE_EQ(items[0].bytes, 3 * gathered_inputs / y + 4 * local_inputs);
  EXPECT_DOUBLE_EQ(items[1].bytes, 2 * gathered_inputs + (3 / y + 2) * gathered_gradients + 4 * local_gradients);
  EXPECT_DOUBLE_EQ(casts.forward, memory_op_seconds(h100, items[0].bytes, 4));
  EXPECT_DOUBLE_EQ(casts.backward, memory_op_seconds(h100, items[1].bytes, 6 + 2));
  // Fewer bytes than casting every gathered tensor whole (4 bytes an element).
  c.sequence_parallel = false;
  const LocalShapes plain = local_shapes(spec, c);
  const Fp8LayerCost whole = fp8_layer_casts({spec, h100, c, plain}, CostRecorder());
  EXPECT_LT(casts.forward + casts.backward, whole.forward + whole.backward);
}

// Fused (stack.fp8_casts, Transformer Engine's LayerNormLinear and LayerNormMLP):
// the norm writes QKV's and MLP up's inputs in fp8, the activation MLP down's,
// each transposed for its dW in backward (2 bytes an element); the attention
// output is cast on its own (4 bytes), and so are the output gradients but MLP
// up's, which leaves the activation's backward cast and transposed.
TEST(CostFp8, FusedCastsLeaveTheAttentionOutputAndThreeGradients) {
  const TransformerSpec spec = fp8_model("llama3-8b");
  MachineProfile h100 = load_machine("dgx-h100");
  EXPECT_EQ(h100.fp8_casts, Fp8Casts::fused);  // NeMo / Megatron-Core's TE layer spec
  ParallelConfig c;
  const LocalShapes shapes = local_shapes(spec, c);
  std::vector<CostItem> items;
  const Fp8LayerCost fused = fp8_layer_casts({spec, h100, c, shapes}, CostRecorder(&items, 1, 1));
  const double T = 8192;
  const double produced_in_fp8 = T * (4096 + 4096 + 14336);  // qkv, up, down inputs
  const double cast_gradients = T * (6144 + 4096 + 4096);    // qkv, proj, down outputs
  ASSERT_EQ(items.size(), 2u);
  EXPECT_DOUBLE_EQ(items[0].bytes, 4 * T * 4096);  // the attention output alone
  EXPECT_DOUBLE_EQ(items[1].bytes, 2 * produced_in_fp8 + 4 * cast_gradients);
  EXPECT_DOUBLE_EQ(fused.forward, memory_op_seconds(h100, items[0].bytes, 1));
  EXPECT_DOUBLE_EQ(fused.backward, memory_op_seconds(h100, items[1].bytes, 3 + 3));
  h100.fp8_casts = Fp8Casts::separate;
  const Fp8LayerCost separate = fp8_layer_casts({spec, h100, c, shapes}, CostRecorder());
  EXPECT_LT(fused.forward + fused.backward, separate.forward + separate.backward);
}

// torchao (stack.fp8_amax tensor): each layer's amaxes over the tensor group alone.
TEST(CostFp8, TorchaoAmaxAllReducesOverTheTensorGroupOnly) {
  const TransformerSpec spec = fp8_model("llama3-8b");
  MachineProfile h100 = load_machine("dgx-h100");
  h100.fp8_amax = Fp8Amax::tensor;
  ParallelConfig c;
  c.data = 8;  // no tensor group: nothing to reduce
  EXPECT_EQ(fp8_amax_reductions({spec, h100, c, local_shapes(spec, c)}, CostRecorder()).forward, 0);
  c.data = 1, c.y = 8;
  std::vector<CostItem> items;
  const Fp8LayerCost amax = fp8_amax_reductions({spec, h100, c, local_shapes(spec, c)}, CostRecorder(&items, 1, 1));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].group_size, 8);
  EXPECT_DOUBLE_EQ(items[0].bytes, 8 * 4);  // X and W of four linears, fp32
  EXPECT_DOUBLE_EQ(items[1].bytes, 4 * 4);  // dY of four linears
  EXPECT_GT(amax.forward, 0);
  EXPECT_DOUBLE_EQ(amax.forward, items[0].exposed);
  // Z (FSDP) gathers the weights before their cast and a rank's activations are its own:
  // the group stays x·y.
  c.z = 4;
  items.clear();
  fp8_amax_reductions({spec, h100, c, local_shapes(spec, c)}, CostRecorder(&items, 1, 1));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].group_size, 8);
  c.y = 1;
  EXPECT_EQ(fp8_amax_reductions({spec, h100, c, local_shapes(spec, c)}, CostRecorder()).forward, 0);
}

// Transformer Engine (stack.fp8_amax stage, the default): per microbatch, one all-reduce of a model
// chunk's amaxes in forward and one in backward over every rank of the stage, none per layer.
TEST(CostFp8, TransformerEngineReducesEachChunksAmaxesOverTheStage) {
  const TransformerSpec spec = fp8_model("llama3-70b");
  const MachineProfile h100 = load_machine("dgx-h100");
  ParallelConfig c;
  c.pipeline = 4, c.interleave = 5, c.y = 4, c.context = 2, c.data = 8;  // 256 GPUs, 64 to a stage
  const LocalShapes shapes = local_shapes(spec, c);
  EXPECT_EQ(fp8_amax_reductions({spec, h100, c, shapes}, CostRecorder()).forward, 0);
  const double microbatches = 16, stage_layers = 20;
  std::vector<CostItem> items;
  const double seconds = fp8_stage_amax({spec, h100, c, shapes}, microbatches, stage_layers, CostRecorder(&items, 1, 1));
  ASSERT_EQ(items.size(), 2u);
  const GroupPlacement stage{64, 8};  // the pipeline outermost: 8 nodes of the stage's ranks
  for (const CostItem& item : items) {
    EXPECT_EQ(item.group_size, stage.size);
    EXPECT_EQ(item.ranks_per_node, stage.ranks_per_node);
    EXPECT_DOUBLE_EQ(item.per_iteration, microbatches * 5);  // every chunk of every microbatch
  }
  EXPECT_DOUBLE_EQ(items[0].bytes, 4 * 8 * 4);  // a chunk's 4 layers: X and W of four linears, fp32
  EXPECT_DOUBLE_EQ(items[1].bytes, 4 * 4 * 4);  // their dY
  const double forward = collective_seconds(h100, CollectiveOp::all_reduce, stage, items[0].bytes);
  const double backward = collective_seconds(h100, CollectiveOp::all_reduce, stage, items[1].bytes);
  EXPECT_DOUBLE_EQ(seconds, microbatches * 5 * (forward + backward));
  // More replicas span more nodes: each reduction waits longer.
  ParallelConfig wider = c;
  wider.data = 64;
  EXPECT_GT(fp8_stage_amax({spec, h100, wider, shapes}, microbatches, stage_layers, CostRecorder()), seconds);
  // The pipeline innermost: a stage's 64 ranks sit 4 apart, 2 to a node.
  ParallelConfig inner = c;
  inner.order = {GridDim::pipeline, GridDim::x, GridDim::y, GridDim::z, GridDim::context, GridDim::data};
  EXPECT_EQ(stage_group(inner, 8).ranks_per_node, 2);
  // bf16 reduces no amaxes; nor does a stage of one rank.
  TransformerSpec bf16 = spec;
  bf16.precision = Precision::bf16;
  EXPECT_EQ(fp8_stage_amax({bf16, h100, c, shapes}, microbatches, stage_layers, CostRecorder()), 0);
  ParallelConfig alone;
  alone.pipeline = 4;
  EXPECT_EQ(fp8_stage_amax({spec, h100, alone, local_shapes(spec, alone)}, 8, 20, CostRecorder()), 0);
}

// A stack that casts each weight in its forward (transient) recasts it every
// microbatch; a cached copy is cast on the first one only.
TEST(CostFp8, TransientWeightsAreCastEveryMicrobatch) {
  const TransformerSpec spec = fp8_model("llama3-8b");
  MachineProfile h100 = load_machine("dgx-h100");
  ParallelConfig c;
  c.y = 2;
  const LocalShapes shapes = local_shapes(spec, c);
  const double layers = 32, microbatches = 4, block = shapes.block_weights();
  std::vector<CostItem> items;
  h100.fp8_weights = Fp8Weights::cached;
  fp8_weight_costs({spec, h100, c, shapes}, {layers, layers}, microbatches, CostRecorder(&items, 1, 1));
  h100.fp8_weights = Fp8Weights::transient;
  fp8_weight_costs({spec, h100, c, shapes}, {layers, layers}, microbatches, CostRecorder(&items, 1, 1));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_DOUBLE_EQ(items[0].bytes, layers * block * 4);  // read bf16, write fp8 and its transpose
  EXPECT_DOUBLE_EQ(items[1].bytes, microbatches * items[0].bytes);
}

// torchao's fp8 FSDP all-gather (stack.fp8_weights gathered): each gather casts the rank's
// fp32 shard (5 bytes a shard element, two gathers a microbatch) and moves 1 byte, not 2;
// backward transposes the gathered weight (2 bytes); FSDP2 copies the gathered fp8 out (1 + 1);
// one all-reduce of the shards' amaxes over Z per iteration gives every weight its scale, a
// collective (tp_comm), not compute.
TEST(CostFp8, GatheredWeightsAreCastOnTheShardAndGatheredInFp8) {
  const TransformerSpec spec = fp8_model("llama3-8b");
  MachineProfile h200 = load_machine("h200-hgx");
  h200.weight_gather = WeightGather::per_block, h200.fsdp_copies = FsdpCopies::per_parameter;
  h200.fp8_weights = Fp8Weights::transient;
  ParallelConfig c;
  c.z = 32, c.microbatch = 64;
  const LocalShapes shapes = local_shapes(spec, c);
  const CostInputs in{spec, h200, c, shapes};  // holds h200 by reference: the stack set below is its
  const double layers = 32, microbatches = 2, block = shapes.block_weights();
  EXPECT_DOUBLE_EQ(gathered_weight_bytes(in), 2);  // transient: gathered in bf16
  h200.fp8_weights = Fp8Weights::gathered;
  EXPECT_DOUBLE_EQ(gathered_weight_bytes(in), 1);
  std::vector<CostItem> items;
  const Fp8WeightCost cost = fp8_weight_costs(in, {layers, layers}, microbatches, CostRecorder(&items, 1, 1));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_DOUBLE_EQ(items[0].bytes, microbatches * layers * block * (2 + 2 * 5 / 32.0));
  EXPECT_EQ(items[1].kind, CostKind::collective);
  EXPECT_EQ(items[1].group_size, 32);
  EXPECT_EQ(items[1].per_iteration, 1);
  EXPECT_DOUBLE_EQ(cost.casts, items[0].exposed);
  EXPECT_DOUBLE_EQ(cost.scales, items[1].exposed);
  // Per linear under full recompute, the recomputed layers' forward gathers (and casts) a third time.
  MachineProfile per_linear = h200;
  per_linear.weight_gather = WeightGather::per_linear;
  ParallelConfig full = c;
  full.recompute = Recompute::full;
  items.clear();
  fp8_weight_costs({spec, per_linear, full, shapes}, {layers, 8}, microbatches, CostRecorder(&items, 1, 1));
  EXPECT_DOUBLE_EQ(items[0].bytes, microbatches * block * (layers * 2 + (2 * layers + 8) * 5 / 32.0));
  // The layer's block gathers move fp8.
  items.clear();
  CostModel(spec, h200).explain(c, items);
  int gathers = 0;
  for (const CostItem& item : items) {
    if (item.name.rfind("all_gather block weights", 0) != 0) continue;
    EXPECT_DOUBLE_EQ(item.bytes, block);
    ++gathers;
  }
  EXPECT_EQ(gathers, 2);  // forward, and again for backward
  MachineProfile transient = h200;
  transient.fp8_weights = Fp8Weights::transient;
  EXPECT_LT(CostModel(spec, h200).evaluate(c).iter_time, CostModel(spec, transient).evaluate(c).iter_time);
}

// The cached fp8 weight and its transpose: 2 bytes per local linear weight.
TEST(CostFp8, WeightsHoldTheFp8Copies) {
  const TransformerSpec fp8 = fp8_model("llama3-70b");
  TransformerSpec bf16 = fp8;
  bf16.precision = Precision::bf16;
  ParallelConfig c;
  c.y = 8, c.data = 2;
  const MemoryBreakdown a = memory_per_device(bf16, c), b = memory_per_device(fp8, c);
  const double layers = 80;
  EXPECT_DOUBLE_EQ(b.weights - a.weights, layers * double(fp8.linear_weights_per_layer()) / 8 * 2);
  EXPECT_DOUBLE_EQ(b.optimizer, a.optimizer);  // fp32 master weights and moments as bf16's
  EXPECT_DOUBLE_EQ(b.activations, a.activations);
}

// A whole iteration: faster than bf16 by less than the rates' ratio, since
// attention, the LM head, the casts and communication do not speed up.
TEST(CostFp8, AnIterationIsFasterByLessThanTheRates) {
  const MachineProfile h100 = load_machine("dgx-h100");
  const TransformerSpec fp8 = fp8_model("llama3-70b");
  TransformerSpec bf16 = fp8;
  bf16.precision = Precision::bf16;
  ParallelConfig c;
  c.pipeline = 4, c.y = 8, c.data = 2, c.sequence_parallel = true, c.zero = 1;
  const Breakdown a = CostModel(bf16, h100).evaluate(c), b = CostModel(fp8, h100).evaluate(c);
  EXPECT_LT(b.compute, a.compute);
  EXPECT_GT(b.compute, a.compute / 2);
  EXPECT_LT(b.iter_time, a.iter_time);
  std::vector<CostItem> items;
  CostModel(fp8, h100).explain(c, items);
  int fp8_items = 0;
  for (const CostItem& item : items) fp8_items += item.name.find("fp8") != std::string::npos;
  EXPECT_EQ(fp8_items, 5);  // two casts, two amax all-reduces, the weight casts
}

}  // namespace
}  // namespace axo

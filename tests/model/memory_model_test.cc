// Memory per device against hand-worked figures (ZeRO's 16 bytes/parameter
// and its sharded forms, Korthikanti et al. 2022 Table 2 activations).
#include "model/memory_model.h"

#include <gtest/gtest.h>

#include <array>

#include "model/presets.h"
#include "model/vocab_parallel.h"

namespace axo {
namespace {

ParallelConfig megatron(int64_t p, int64_t t, int64_t b, Recompute r, bool sp) {
  ParallelConfig c;
  c.pipeline = p, c.y = t, c.microbatch = b, c.recompute = r, c.sequence_parallel = sp;
  return c;
}

TEST(MemoryModel, ModelStateIs16BytesPerParameter) {
  const TransformerSpec spec = load_model("gpt3-175b");
  const ParallelConfig c = megatron(8, 8, 1, Recompute::full, false);
  const MemoryBreakdown m = memory_per_device(spec, c);
  const double h = 12288, V = 50257, s = 2048;
  const double first_stage = 12 * (12 * h * h + 13 * h) + (V + s) * h;  // 12 layers + embeddings
  EXPECT_DOUBLE_EQ(m.weights, first_stage / 8 * 2);
  EXPECT_DOUBLE_EQ(m.gradients, first_stage / 8 * 2);
  EXPECT_DOUBLE_EQ(m.optimizer, first_stage / 8 * 12);
}

TEST(MemoryModel, ActivationsFollowKorthikantiTable2) {
  TransformerSpec spec = load_model("megatron-1t");  // fp16, dropout
  const double s = 2048, b = 1, h = 25600, a = 160, t = 8;
  const double sbh = s * b * h;
  const double layers = 128 / 64;  // per stage
  const double in_flight = 64;     // first stage of 64: min(m, p) microbatches
  auto activations = [&](Recompute r, bool sp) {
    return memory_per_device(spec, megatron(64, 8, 1, r, sp)).activations;
  };
  // Tensor parallel, no recompute: sbh(10 + 24/t + 5as/(ht)) per layer.
  EXPECT_NEAR(activations(Recompute::none, false),
              in_flight * layers * sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1);
  // Sequence parallel + selective recompute: 34·sbh/t.
  EXPECT_NEAR(activations(Recompute::selective, true), in_flight * layers * 34 * sbh / t, 1);
  // Full recompute: 2·sbh per layer plus one layer's working set.
  EXPECT_NEAR(activations(Recompute::full, false),
              in_flight * layers * 2 * sbh + sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1);
}

// Sequence parallelism with z > 1: each Z rank holds microbatch/z sequences
// and splits their rows over Y, so Table 2's 34·sbh/t holds per Z rank
// (z = 2 and b = 2: one sequence each, as b = 1 without Z).
TEST(MemoryModel, SequenceParallelWithZSplitsEachZRanksRowsOverY) {
  TransformerSpec spec = load_model("megatron-1t");  // fp16, dropout
  const double s = 2048, h = 25600, t = 8;
  const double sbh = s * 1 * h, layers = 2, in_flight = 64;
  ParallelConfig c = megatron(64, 8, 2, Recompute::selective, true);
  c.z = 2;
  EXPECT_NEAR(memory_per_device(spec, c).activations, in_flight * layers * 34 * sbh / t, 1);
  c.sequence_parallel = false;  // the layer norms' and dropouts' rows whole on every Y rank: 10 + 24/t
  EXPECT_NEAR(memory_per_device(spec, c).activations, in_flight * layers * sbh * (10 + 24 / t), 1);
}

TEST(MemoryModel, FlashAttentionDropsTheFiveAsOverHTerm) {
  TransformerSpec spec = load_model("megatron-1t");  // fp16, dropout
  const double s = 2048, b = 1, h = 25600, a = 160, t = 8;
  const double sbh = s * b * h, layers = 2, in_flight = 64;
  const ParallelConfig c = megatron(64, 8, 1, Recompute::none, false);
  const double materialized = memory_per_device(spec, c, AttentionKind::materialized).activations;
  const double flash = memory_per_device(spec, c, AttentionKind::flash).activations;
  EXPECT_DOUBLE_EQ(materialized, memory_per_device(spec, c).activations);  // the default
  // Flash keeps sbh(10 + 24/t) plus one fp32 log-sum-exp per query row of its a/t heads.
  EXPECT_NEAR(flash, in_flight * layers * (sbh * (10 + 24 / t) + b * (a / t) * s * 4), 1);
  EXPECT_NEAR(materialized - flash, in_flight * layers * (sbh * 5 * a * s / (h * t) - b * (a / t) * s * 4), 1);
  // Selective recompute stores no attention core either way.
  const ParallelConfig sel = megatron(64, 8, 1, Recompute::selective, true);
  EXPECT_DOUBLE_EQ(memory_per_device(spec, sel, AttentionKind::flash).activations,
                   memory_per_device(spec, sel, AttentionKind::materialized).activations);
}

TEST(MemoryModel, AttentionCoreBytesByKind) {
  TransformerSpec spec = load_model("megatron-1t");
  spec.seq_len = 4096;
  EXPECT_DOUBLE_EQ(attention_core_bytes(spec, 3, AttentionKind::flash), 3 * 4096 * 4.0);
  EXPECT_DOUBLE_EQ(attention_core_bytes(spec, 3, AttentionKind::materialized), 3 * 4096.0 * 4096 * 5);
  spec.dropout = false;
  EXPECT_DOUBLE_EQ(attention_core_bytes(spec, 3, AttentionKind::materialized), 3 * 4096.0 * 4096 * 2);
}

TEST(MemoryModel, OffloadNeverRaisesDeviceMemory) {
  const TransformerSpec spec = load_model("llama2-70b");
  for (int64_t p : {1, 2, 4, 8}) {
    for (int64_t y : {1, 2, 8}) {
      for (int64_t z : {1, 2}) {
        ParallelConfig c;
        c.pipeline = p, c.y = y, c.z = z, c.microbatch = 2;
        const MemoryBreakdown on_device = memory_per_device(spec, c);
        c.offload = true;
        const MemoryBreakdown offloaded = memory_per_device(spec, c);
        EXPECT_LE(offloaded.total(), on_device.total());
        EXPECT_EQ(offloaded.optimizer, 0);
        // Model state drops from 16 to 4 bytes per parameter: 4x, the AxoNN paper's figure.
        const double state = on_device.weights + on_device.gradients + on_device.optimizer;
        EXPECT_NEAR(state / (offloaded.weights + offloaded.gradients), 4.0, 1e-12);
      }
    }
  }
}

TEST(MemoryModel, InterleavingHoldsMoreMicrobatches) {
  const TransformerSpec spec = load_model("gpt3-175b");
  ParallelConfig c = megatron(8, 8, 1, Recompute::selective, true);
  const double plain = memory_per_device(spec, c).activations;
  c.interleave = 3;
  EXPECT_NEAR(memory_per_device(spec, c).activations / plain, 1 + 7.0 / (8 * 3), 1e-9);
}

// GPT-3 175B on 8 stages of 3 chunks (TP 8, selective recompute, sequence parallelism), and its split.
struct Interleaved {
  TransformerSpec spec;
  ParallelConfig config;
  PipelineSplit split;
};
Interleaved gpt3_on_8_stages_of_3_chunks() {
  const TransformerSpec spec = load_model("gpt3-175b");
  ParallelConfig c = megatron(8, 8, 1, Recompute::selective, true);
  c.interleave = 3;
  return {spec, c, split_pipeline(spec, 8, 3)};
}

// Interleaved, stage s holds 2(p − s − 1) + (v − 1)·p + 1 chunk forwards of 1/v of its layers
// (Megatron-Core's warm-up): with 8 stages of 3 chunks, 2/3 of a microbatch fewer each stage on
// (stage 1: 29/3, stage 3: 25/3, stage 4: 23/3), down to 17/3 on the last, not 1.
TEST(MemoryModel, InterleavedStagesHoldTheirWarmUpsChunks) {
  const Interleaved grid = gpt3_on_8_stages_of_3_chunks();  // references, not bindings: clang 14's
  const TransformerSpec& spec = grid.spec;                     // lambdas cannot capture bindings
  const ParallelConfig& c = grid.config;
  const PipelineSplit& split = grid.split;
  for (int64_t s = 1; s < 5; ++s) ASSERT_EQ(split.stage_layers(s), split.stage_layers(1)) << split.text();
  const auto activations = [&](int64_t stage) { return stage_memory(spec, c, split, stage).activations; };
  // Each middle stage: held microbatches x one microbatch's + the working buffers, alike.
  const double step = activations(3) - activations(4);  // 2/3 of a microbatch's
  EXPECT_NEAR((activations(1) - activations(4)) / step, 3, 1e-9);  // (29 − 23) / (25 − 23)
  EXPECT_NEAR((activations(2) - activations(3)) / step, 1, 1e-9);
  // With as many microbatches as stages every forward runs first: each middle stage holds all 8.
  TransformerSpec eight = spec;
  eight.global_batch = 8;  // microbatch 1 on one replica: m = 8 = p
  ASSERT_EQ(eight.global_batch / (c.data * c.microbatch), 8);
  const auto held = [&](int64_t stage) { return stage_memory(eight, c, split, stage).activations; };
  EXPECT_NEAR(held(4), held(1), 1e-6 * held(1));
  EXPECT_NEAR((held(4) - activations(4)) / step, (8 - 23.0 / 3) / (2.0 / 3), 1e-9);
  // axo's executor keeps the warm-up there (as PyTorch's ScheduleInterleaved1F1B does).
  const MemoryStack executor = executor_memory_stack(Schedule::one_f_one_b);
  const auto executor_held = [&](const TransformerSpec& model, int64_t stage) {
    return stage_memory(model, c, split, stage, executor).activations;
  };
  EXPECT_NEAR(executor_held(eight, 4), executor_held(spec, 4), 1e-6 * executor_held(spec, 4));
}

// axo's message-driven schedule keeps at most p microbatches in flight, each in every chunk of a
// stage but the model's last: min(m, p) on every stage but the last, which holds one microbatch of
// its last chunk ((v − 1)·p + 1 chunk activations, as 1F1B's last stage does), where 1F1B's stages
// hold fewer down the pipeline and its interleaved first stage more.
TEST(MemoryModel, TheMessageDrivenScheduleHoldsAsManyMicrobatchesAsStages) {
  Interleaved grid = gpt3_on_8_stages_of_3_chunks();
  const TransformerSpec& spec = grid.spec;
  ParallelConfig& c = grid.config;
  const PipelineSplit& split = grid.split;
  for (int64_t s = 1; s < 8; ++s) ASSERT_EQ(split.stage_layers(s), split.stage_layers(1)) << split.text();
  const MemoryStack message_driven = executor_memory_stack(Schedule::message_driven);
  const MemoryStack one_f_one_b = executor_memory_stack(Schedule::one_f_one_b);
  const auto activations = [&](int64_t stage, const MemoryStack& stack) {
    return stage_memory(spec, c, split, stage, stack).activations;
  };
  // One microbatch's bytes on a middle stage: 1F1B's stage 3 holds 25/3 of them, its stage 4 23/3.
  const double microbatch = (activations(3, one_f_one_b) - activations(4, one_f_one_b)) / (2.0 / 3);
  for (int64_t s = 2; s < 7; ++s) EXPECT_NEAR(activations(s, message_driven), activations(1, message_driven), 1);
  EXPECT_NEAR((activations(4, message_driven) - activations(4, one_f_one_b)) / microbatch, 8 - 23.0 / 3, 1e-9);
  // The first: 8 against Korthikanti et al.'s 8·(1 + 7/24).
  EXPECT_NEAR((activations(0, one_f_one_b) - activations(0, message_driven)) / microbatch, 7.0 / 3, 1e-9);
  EXPECT_NEAR(activations(7, message_driven), activations(7, one_f_one_b), 1);
  // The last stage: 8 − 7/3 microbatches under both; without interleaving one.
  c.interleave = 1;
  const PipelineSplit plain = split_pipeline(spec, 8, 1);
  EXPECT_EQ(stage_memory(spec, c, plain, 7, message_driven).activations,
            stage_memory(spec, c, plain, 7, one_f_one_b).activations);
}

TEST(MemoryModel, TheFullestOfUnequalStagesSetsMemory) {
  const TransformerSpec spec = load_model("llama3-70b");  // 80 layers: 21, 20, 20, 19 over 4 stages
  ParallelConfig c = megatron(4, 8, 1, Recompute::full, false);
  const PipelineSplit split = split_pipeline(spec, 4, 1);
  ASSERT_EQ(split.text(), "21,20,20,19");
  EXPECT_EQ(stage_params(spec, c, split, 0), 21 * spec.params_per_layer() + spec.vocab * spec.hidden);
  EXPECT_EQ(stage_params(spec, c, split, 1), 20 * spec.params_per_layer());
  const MemoryBreakdown m = memory_per_device(spec, c);
  const MemoryBreakdown first = stage_memory(spec, c, split, 0);
  EXPECT_EQ(m.total(), first.total());
  EXPECT_DOUBLE_EQ(m.weights, double(stage_params(spec, c, split, 0)) / 8 * 2);
  for (int64_t s = 1; s < 4; ++s) EXPECT_LT(stage_memory(spec, c, split, s).total(), m.total()) << s;
  // Stage s holds min(m, p − s) microbatches: the second stage three layers' inputs per layer, the last one.
  const double input = 1.0 * 8192 * 8192 * 2;  // full recompute keeps each layer's [s·b, h] input, bf16
  const double working = stage_memory(spec, c, split, 1).activations - 3 * 20 * input;
  EXPECT_GT(working, 0);
  EXPECT_DOUBLE_EQ(stage_memory(spec, c, split, 2).activations, 2 * 20 * input + working);
}

// The stages together hold each layer once, the embedding and the head: the head's own copy of a
// tied embedding only where a pipeline parts them (gpt2-mini ties them, llama3-70b does not).
TEST(MemoryModel, ThePipelineHoldsEveryStagesParametersOnce) {
  for (const char* name : {"gpt2-mini", "llama3-70b"}) {
    const TransformerSpec spec = load_model(name);
    for (auto [pipeline, interleave] : {std::pair<int64_t, int64_t>{1, 1}, {2, 1}, {3, 1}, {2, 2}, {spec.layers, 1}}) {
      ParallelConfig c;
      c.pipeline = pipeline, c.interleave = interleave;
      const PipelineSplit split = split_pipeline(spec, pipeline, interleave);
      int64_t stages = 0;
      for (int64_t s = 0; s < pipeline; ++s) stages += stage_params(spec, c, split, s);
      EXPECT_EQ(pipeline_params(spec, c), stages) << name << " over " << pipeline << " x " << interleave;
    }
  }
  ParallelConfig one, two;
  two.pipeline = 2;
  const TransformerSpec tied = load_model("gpt2-mini");
  EXPECT_EQ(pipeline_params(tied, two) - pipeline_params(tied, one), tied.vocab * tied.hidden);
}

// The search skips a grid whose floor is beyond the memory (or the closest miss): no setting of
// the grid may go under it, on grids with and without a pipeline, z, data and context, on both
// reduce dtypes; and a setting that shards and offloads all it can on one stage meets it.
TEST(MemoryModel, NoSettingGoesUnderTheModelStateFloor) {
  const TransformerSpec spec = load_model("llama3-70b");
  for (ReduceDtype reduce : {ReduceDtype::compute, ReduceDtype::fp32, ReduceDtype::fp32_copy}) {
    MemoryStack stack;
    stack.reduce_dtype = reduce;
    for (const auto& [pipeline, z, data, context] : std::vector<std::array<int64_t, 4>>{
             {1, 1, 1, 1}, {4, 1, 2, 1}, {1, 2, 4, 1}, {2, 2, 2, 2}, {5, 1, 1, 1}}) {
      ParallelConfig c;
      c.pipeline = pipeline, c.z = z, c.data = data, c.context = context, c.y = 2;
      const double floor = model_state_floor_bytes(spec, c, stack);
      for (int64_t microbatch : {z, 2 * z}) {
        for (int64_t interleave : {int64_t(1), int64_t(2)}) {
          for (Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full}) {
            for (int64_t zero : {0, 1, 2}) {
              for (bool offload : {false, true}) {
                c.microbatch = microbatch, c.interleave = pipeline > 1 ? interleave : 1, c.recompute = recompute;
                c.zero = zero, c.offload = offload;
                EXPECT_GE(memory_per_device(spec, c, stack).total(), floor)
                    << "p " << pipeline << " z " << z << " d " << data << " c " << context << " mb " << microbatch
                    << " il " << c.interleave << " zero " << zero << " offload " << offload;
              }
            }
          }
        }
      }
    }
  }
  ParallelConfig c;
  c.z = 2, c.data = 4, c.zero = 2, c.offload = true;
  const MemoryBreakdown m = memory_per_device(spec, c);
  EXPECT_DOUBLE_EQ(m.weights + m.gradients + m.optimizer, model_state_floor_bytes(spec, c, {}));
}

// ZeRO over the data group (REFERENCE-DATA.md): 4 + 12/N bytes per parameter
// with zero=1, 2 + 14/N with zero=2, on what x, y and z leave.
TEST(MemoryModel, ZeroShardsOptimizerThenGradientsOverData) {
  const TransformerSpec spec = load_model("gpt3-175b");
  ParallelConfig c = megatron(8, 8, 1, Recompute::full, false);
  c.data = 4;
  const double h = 12288, V = 50257, s = 2048;
  const double local = (12 * (12 * h * h + 13 * h) + (V + s) * h) / 8;  // first stage over y=8
  const MemoryBreakdown none = memory_per_device(spec, c);
  c.zero = 1;
  const MemoryBreakdown one = memory_per_device(spec, c);
  EXPECT_DOUBLE_EQ(one.weights, local * 2);
  EXPECT_DOUBLE_EQ(one.gradients, local * 2);
  EXPECT_DOUBLE_EQ(one.optimizer, local * 12 / 4);
  EXPECT_DOUBLE_EQ(one.weights + one.gradients + one.optimizer, local * (4 + 12.0 / 4));
  EXPECT_DOUBLE_EQ(one.activations, none.activations);  // activations do not change
  c.zero = 2;
  const MemoryBreakdown two = memory_per_device(spec, c);
  EXPECT_DOUBLE_EQ(two.weights + two.gradients + two.optimizer, local * (2 + 14.0 / 4));
  c.data = 2, c.zero = 1;  // the check: zero=1 at data=2 halves the optimizer state
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c).optimizer, none.optimizer / 2);
}

// Megatron-LM under bf16 accumulates and reduces gradients in fp32: its distributed optimizer
// holds 6 + 12/d bytes per parameter (Megatron-LM docs/source/api-guide/dist_optimizer.md). FSDP
// (z > 1) keeps its fp32 gradient shard with the fp32 master, in the 16 bytes as before.
TEST(MemoryModel, Fp32ReductionHoldsFp32GradientsWhereWeightsAreWhole) {
  const TransformerSpec spec = load_model("gpt3-175b");
  ParallelConfig c = megatron(8, 8, 1, Recompute::full, false);
  c.data = 4, c.zero = 1;
  const double h = 12288, V = 50257, s = 2048;
  const double local = (12 * (12 * h * h + 13 * h) + (V + s) * h) / 8;  // first stage over y=8
  MemoryStack fp32_reduce;
  fp32_reduce.reduce_dtype = ReduceDtype::fp32;
  const MemoryBreakdown one = memory_per_device(spec, c, fp32_reduce);
  EXPECT_DOUBLE_EQ(one.gradients, local * 4);
  EXPECT_DOUBLE_EQ(one.weights + one.gradients + one.optimizer, local * (6 + 12.0 / 4));
  c.zero = 2;
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, fp32_reduce).gradients, local * 4 / 4);
  c.zero = 0, c.y = 4, c.z = 2;
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, fp32_reduce).total(), memory_per_device(spec, c).total());
  // A stack reducing fp32 copies (axo's executor: fp32_copy) holds its gradients in the model's 2 bytes.
  c = megatron(8, 8, 1, Recompute::full, false);
  c.data = 4, c.zero = 1;
  MemoryStack copies;
  copies.reduce_dtype = ReduceDtype::fp32_copy;
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, copies).gradients, local * 2);
}

// Megatron's distributed optimizer shards over the data-parallel group with
// the context ranks in it: zero over data=2, context=2 divides by 4.
TEST(MemoryModel, ZeroShardsOverDataTimesContext) {
  const TransformerSpec spec = load_model("llama3-8b");
  ParallelConfig c;
  c.y = 2, c.data = 2, c.context = 2;
  const MemoryBreakdown none = memory_per_device(spec, c);
  c.zero = 1;
  const MemoryBreakdown one = memory_per_device(spec, c);
  EXPECT_DOUBLE_EQ(one.optimizer, none.optimizer / 4);
  EXPECT_DOUBLE_EQ(one.gradients, none.gradients);
  c.zero = 2;
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c).gradients, none.gradients / 4);
  c.data = 1, c.zero = 1;  // context ranks alone are a group to shard over
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c).optimizer, none.optimizer / 2);
}

TEST(MemoryModel, ZeroComposesWithZAndOffload) {
  const TransformerSpec spec = load_model("llama2-70b");
  ParallelConfig c;
  c.z = 4, c.data = 8, c.microbatch = 4;
  const MemoryBreakdown sharded_by_z = memory_per_device(spec, c);
  c.zero = 2;
  const MemoryBreakdown both = memory_per_device(spec, c);
  // The data group shards what Z already has: another factor of 8.
  EXPECT_DOUBLE_EQ(both.optimizer, sharded_by_z.optimizer / 8);
  EXPECT_DOUBLE_EQ(both.gradients, sharded_by_z.gradients / 8);
  EXPECT_DOUBLE_EQ(both.weights, sharded_by_z.weights);
  c.offload = true;  // the optimizer shard lives on the host
  const MemoryBreakdown offloaded = memory_per_device(spec, c);
  EXPECT_EQ(offloaded.optimizer, 0);
  EXPECT_DOUBLE_EQ(offloaded.gradients, both.gradients);
  c.data = 1;  // zero with one replica changes nothing
  c.offload = false;
  const MemoryBreakdown one_replica = memory_per_device(spec, c);
  c.zero = 0;
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c).total(), one_replica.total());
}

TEST(MemoryModel, ContextDividesActivationsAndAddsTheRingBuffers) {
  const TransformerSpec spec = load_model("llama3-8b");  // s 8192, 8 KV heads of 128, bf16
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
    ParallelConfig one;
    one.y = 2, one.recompute = r;
    ParallelConfig two = one;
    two.context = 2;
    const MemoryBreakdown a = memory_per_device(spec, one), b = memory_per_device(spec, two);
    EXPECT_DOUBLE_EQ(b.activations, a.activations / 2) << to_string(r);
    EXPECT_DOUBLE_EQ(b.weights, a.weights);  // context ranks hold the same weights
    EXPECT_DOUBLE_EQ(b.optimizer, a.optimizer);
    // Two receive blocks of K and V: 2 · 2 · 4096 tokens · (8/2 · 128) · 2 bytes.
    EXPECT_DOUBLE_EQ(b.comm_buffers - a.comm_buffers, 2.0 * 2 * 4096 * (4 * 128) * 2);
  }
}

// fp8 weight copies (an fp8 weight and its transpose, 2 bytes per linear element) as the
// stack holds them: every layer's when cached, none when the weights are fp8 themselves
// (NeMo's fp8_param_gather), the computed layer's only when cast per forward.
TEST(MemoryModel, Fp8WeightCopiesAsTheStackHoldsThem) {
  TransformerSpec spec = load_model("llama3-8b");
  spec.precision = Precision::fp8;
  ParallelConfig c;
  c.y = 2;
  auto weights = [&](Fp8Weights held) {
    MemoryStack stack(AttentionKind::flash);
    stack.fp8_weights = held;
    return memory_per_device(spec, c, stack).weights;
  };
  const double one_layer = double(spec.linear_weights_per_layer()) / 2 * 2;  // y = 2 shards; 2 bytes
  TransformerSpec bf16 = spec;
  bf16.precision = Precision::bf16;
  EXPECT_DOUBLE_EQ(weights(Fp8Weights::primary), memory_per_device(bf16, c).weights);
  EXPECT_DOUBLE_EQ(weights(Fp8Weights::cached) - weights(Fp8Weights::primary), double(spec.layers) * one_layer);
  EXPECT_DOUBLE_EQ(weights(Fp8Weights::transient) - weights(Fp8Weights::primary), one_layer);
  // bf16 holds no fp8 copies whatever the stack.
  MemoryStack cached(AttentionKind::flash);
  cached.fp8_weights = Fp8Weights::cached;
  EXPECT_DOUBLE_EQ(memory_per_device(bf16, c, cached).weights, memory_per_device(bf16, c).weights);
}

// Gathered in fp8 over Z (torchao's fp8 FSDP all-gather): the two prefetched block buffers hold
// 1 byte an element, not 2, and the gathered fp8 weight is the buffer, so the computed layer's
// copy is only its transpose (1 byte of the gathered layer); transient casts the gathered bf16
// layer (2 bytes of it, not of the rank's shard); without Z both are transient's.
TEST(MemoryModel, Fp8GatheredWeightsHalveTheBlockBuffers) {
  TransformerSpec spec = load_model("llama3-8b");
  spec.precision = Precision::fp8;
  ParallelConfig c;
  c.z = 8, c.microbatch = 8;
  auto memory = [&](Fp8Weights held) {
    MemoryStack stack(AttentionKind::flash);
    stack.weight_gather = WeightGather::per_block, stack.fp8_weights = held;
    return memory_per_device(spec, c, stack);
  };
  const MemoryBreakdown transient = memory(Fp8Weights::transient), gathered = memory(Fp8Weights::gathered);
  EXPECT_DOUBLE_EQ(gathered.comm_buffers, transient.comm_buffers / 2);
  const double layer = double(spec.linear_weights_per_layer());  // x = y = 1: the whole gathered layer
  EXPECT_DOUBLE_EQ(transient.weights - gathered.weights, layer);
  MemoryStack bf16_stack(AttentionKind::flash);
  bf16_stack.weight_gather = WeightGather::per_block;
  TransformerSpec bf16 = spec;
  bf16.precision = Precision::bf16;
  EXPECT_DOUBLE_EQ(transient.weights - memory_per_device(bf16, c, bf16_stack).weights, 2 * layer);
  c.z = 1, c.data = 8, c.microbatch = 1;
  EXPECT_DOUBLE_EQ(memory(Fp8Weights::gathered).weights, memory(Fp8Weights::transient).weights);
}

// FSDP gathers one transformer block at a time (the current one and the prefetched next):
// the buffers hold two blocks' weights, never the whole model; AxoNN gathers one linear.
TEST(MemoryModel, PerBlockGatherHoldsTwoBlocks) {
  const TransformerSpec spec = load_model("llama3-8b");  // bf16
  ParallelConfig c;
  c.z = 8, c.microbatch = 8, c.overlap = true;
  MemoryStack per_block(AttentionKind::flash);
  per_block.weight_gather = WeightGather::per_block;
  const double largest_linear = double(spec.mlp_up_width() * spec.hidden);  // SwiGLU's fused w1|w3
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, per_block).comm_buffers, 2.0 * double(spec.params_per_layer()) * 2);
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, AttentionKind::flash).comm_buffers, 2.0 * largest_linear * 2);
}

// A fused loss (flash-attn's cross entropy, llm-foundry's default) keeps the 2-byte logits
// and no fp32 copy: one microbatch's T · V'/y · 4 bytes less.
TEST(MemoryModel, FusedLossDropsTheFp32Logits) {
  const TransformerSpec spec = load_model("llama3-8b");  // bf16, vocabulary 128256
  ParallelConfig c;
  c.y = 4, c.microbatch = 2;
  const MemoryStack copy(AttentionKind::flash);
  MemoryStack fused(AttentionKind::flash);
  fused.loss = LossKind::fused;
  const double tokens = 2.0 * double(spec.seq_len);
  const double rows = double(padded_vocab(spec, 4)) / 4;
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, copy).activations - memory_per_device(spec, c, fused).activations,
                   tokens * rows * 4);
}

// torchtitan's per-op selective checkpointing keeps, per token of a Llama block: its input,
// wq's, wv's, w1's and w2's outputs (the odd matmuls of wq wk wv wo w1 w3 w2) and the attention
// output, plus one fp32 log-sum-exp per head; in backward one layer's rest is rebuilt.
TEST(MemoryModel, PerOpSelectiveKeepsEveryOtherMatmul) {
  const TransformerSpec spec = load_model("llama3-8b");  // h 4096, 32 heads, 8 KV heads of 128, ffn 14336
  ParallelConfig c;
  c.recompute = Recompute::selective;
  MemoryStack per_op(AttentionKind::flash);
  per_op.selective = SelectiveKind::per_op;
  const double tokens = double(spec.seq_len), h = 4096, kv = 8 * 128, ffn = 14336;
  const double kept = tokens * 2 * (h + h + kv + ffn + h + h) + tokens * 32 * 4;  // input, wq, wv, w1, w2, attention
  const double megatron = memory_per_device(spec, c, AttentionKind::flash).activations;
  ParallelConfig full = c;
  full.recompute = Recompute::full;
  // Per layer: kept bytes; plus once, the rest of one layer (the whole layer minus what it kept).
  const double whole_layer_and_logits = memory_per_device(spec, full, AttentionKind::flash).activations -
                                        double(spec.layers) * tokens * h * 2;  // full keeps each layer's input
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, per_op).activations,
                   double(spec.layers) * kept + whole_layer_and_logits - kept);
  EXPECT_LT(memory_per_device(spec, c, per_op).activations, megatron);
}

// NeMo's distributed_fused_adam with dtype bf16 keeps master and moments in bf16: 6 bytes.
TEST(MemoryModel, Bf16OptimizerStateIsSixBytesPerParameter) {
  const TransformerSpec spec = load_model("llama3-8b");
  ParallelConfig c;
  c.data = 2, c.zero = 1;
  MemoryStack bf16_state;
  bf16_state.optimizer_state = OptimizerState::bf16;
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, bf16_state).optimizer, memory_per_device(spec, c).optimizer / 2);
  EXPECT_DOUBLE_EQ(memory_per_device(spec, c, bf16_state).optimizer, double(spec.parameter_count()) * 6 / 2);
}

// Partial recompute: the first recompute_layers of each chunk keep their inputs only, the others
// all their activations; as many as a chunk holds is full recompute.
TEST(MemoryModel, PartialRecomputeKeepsTheOtherLayersWhole) {
  const TransformerSpec spec = load_model("gpt3-175b");  // 96 layers: 12 per stage of 8, 6 per chunk of 2
  ParallelConfig c = megatron(8, 8, 1, Recompute::full, true);
  c.interleave = 2;
  auto activations = [&](Recompute recompute, int64_t recompute_layers) {
    ParallelConfig with = c;
    with.recompute = recompute, with.recompute_layers = recompute_layers;
    return memory_per_device(spec, with).activations;
  };
  const double full = activations(Recompute::full, 0), none = activations(Recompute::none, 0);
  EXPECT_DOUBLE_EQ(activations(Recompute::full, 6), full);
  EXPECT_DOUBLE_EQ(activations(Recompute::full, 60), full);
  EXPECT_GT(activations(Recompute::full, 5), full);
  EXPECT_LT(activations(Recompute::full, 1), none);
  // Each layer per chunk recomputed saves the same bytes: two chunks' worth of one layer's
  // activations less its input, times the microbatches in flight.
  const double step = activations(Recompute::full, 1) - activations(Recompute::full, 2);
  EXPECT_GT(step, 0);
  EXPECT_NEAR(activations(Recompute::full, 2) - activations(Recompute::full, 3), step, 1e-9 * full);
  EXPECT_NEAR(activations(Recompute::full, 5) - full, step, 1e-9 * full);
}

}  // namespace
}  // namespace axo

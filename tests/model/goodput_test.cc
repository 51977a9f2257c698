// Goodput and time to train against computations by hand.
#include "model/goodput.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "model/presets.h"

namespace axo {
namespace {

// A GPT small enough to count by hand: 2 layers, h = 8, 2 heads, ffn 32,
// vocabulary 16, 4 positions, biases, LayerNorm, tied embeddings.
TransformerSpec tiny_gpt() {
  TransformerSpec s;
  s.name = "tiny";
  s.layers = 2, s.hidden = 8, s.heads = 2, s.kv_heads = 2, s.ffn_hidden = 32;
  s.seq_len = 4, s.vocab = 16, s.global_batch = 8;
  return s;
}

TEST(CheckpointState, CountsEveryStageOnceWithTheOptimizer) {
  const TransformerSpec spec = tiny_gpt();
  // Per layer: LayerNorms 2·2h = 32; QKV 3h² + 3h = 216; projection h² + h = 72;
  // MLP h·32 + 32 + 32·h + h = 552: 872 parameters.
  ASSERT_EQ(spec.params_per_layer(), 872);
  ParallelConfig one_stage;
  // 2 layers (1744) + token and position embeddings 16·8 + 4·8 = 160 + final
  // LayerNorm 16 = 1920 parameters; bf16 weights (2 B) + fp32 master weights
  // and moments (12 B) = 14 B each: 26,880 bytes.
  EXPECT_DOUBLE_EQ(checkpoint_state_bytes(spec, one_stage), 26880);
  // Two stages: the last keeps its own copy of the tied head, 16·8 = 128 more:
  // 2048 parameters, 28,672 bytes, whatever the sharding or the offload.
  ParallelConfig two_stages;
  two_stages.pipeline = 2, two_stages.y = 2, two_stages.offload = true;
  EXPECT_DOUBLE_EQ(checkpoint_state_bytes(spec, two_stages), 28672);
  // fp32: 4 B weights + 8 B moments = 12 B per parameter: 1920 · 12 = 23,040.
  TransformerSpec fp32 = spec;
  fp32.precision = Precision::fp32;
  EXPECT_DOUBLE_EQ(checkpoint_state_bytes(fp32, one_stage), 23040);
}

// Issue: the middle stages counted layers / pipeline layers each, rounded down: gpt3-175b's 96
// layers over 64 stages (1 or 2 each) checkpointed 1552 GiB where 2285 GiB is every stage's. A
// model's checkpoint is every layer once whatever the split (the tied head's copy aside).
TEST(CheckpointState, EveryLayerOnceWhateverTheSplit) {
  const TransformerSpec spec = load_model("gpt3-175b");
  ParallelConfig two;
  two.pipeline = 2;
  const double whole = checkpoint_state_bytes(spec, two);
  for (auto [pipeline, interleave] : {std::pair<int64_t, int64_t>{7, 1}, {64, 1}, {8, 3}, {12, 2}, {96, 1}}) {
    ParallelConfig c;
    c.pipeline = pipeline, c.interleave = interleave;
    EXPECT_DOUBLE_EQ(checkpoint_state_bytes(spec, c), whole) << pipeline << " x " << interleave;
  }
}

// 1000 GPUs failing at 1e-4 per GPU-hour: M = 3600 / 0.1 = 36,000 s.
// 1e12 bytes of state at 100 GB/s: C = 10 s; R = 600 + 10 = 610 s.
// Young: √(2 · 10 · 36,000) = 848.53 s = 84.85 iterations of 10 s → 85: τ = 850 s.
// goodput = 850 / 860 · (1 − (610 + 860 / 2) / 36,000) = 0.98837 · 0.97111 = 0.959819.
TEST(Goodput, YoungIntervalInWholeIterationsAndFirstOrderGoodput) {
  MachineProfile machine;
  machine.failures_per_gpu_hour = 1e-4;
  machine.checkpoint_filesystem_GBps = 100;
  machine.restart_s = 600;
  const Goodput g = goodput(1e12, 10, 1000, machine);
  EXPECT_DOUBLE_EQ(g.mtbf_s, 36000);
  EXPECT_DOUBLE_EQ(g.checkpoint_write_s, 10);
  EXPECT_DOUBLE_EQ(g.restart_s, 610);
  EXPECT_DOUBLE_EQ(g.checkpoint_interval_s, 850);
  EXPECT_NEAR(g.goodput, 0.9598191214, 1e-9);
  // 1 − 600 / 36,000 = 0.98333 bounds every configuration's goodput.
  EXPECT_NEAR(goodput_upper_bound(1000, machine), 0.9833333333, 1e-9);
  EXPECT_LT(g.goodput, goodput_upper_bound(1000, machine));
  // An iteration longer than Young's interval: one checkpoint per iteration.
  EXPECT_DOUBLE_EQ(goodput(1e12, 2000, 1000, machine).checkpoint_interval_s, 2000);
  // Failures faster than a restart: nothing trains.
  machine.failures_per_gpu_hour = 10;
  EXPECT_EQ(goodput(1e12, 10, 1000, machine).goodput, 0);
}

TEST(Goodput, DefaultFailureRateIsLlama3s) {
  // 419 interruptions / (54 days · 24 h · 16,384 GPUs) = 1.9733e-5 per GPU-hour.
  EXPECT_NEAR(MachineProfile{}.failures_per_gpu_hour, 1.9733e-5, 1e-9);
}

// 15e12 tokens at 1024 sequences of 4096 tokens (4,194,304 per iteration):
// ⌈3,576,278.7⌉ = 3,576,279 iterations; at 10 s, 35,762,790 s ideal; at
// goodput 0.959819, 37,259,927 s = 431.249 days; on 1000 GPUs 10,349,980
// GPU-hours, $20,699,959 at $2 per GPU-hour.
TEST(TimeToTrain, TokensToDaysGpuHoursAndCost) {
  const TrainingTime t = time_to_train(15e12, 1024 * 4096, 10, 0.9598191214470284, 1000, 2);
  EXPECT_DOUBLE_EQ(t.iterations, 3576279);
  EXPECT_DOUBLE_EQ(t.ideal_s, 35762790);
  EXPECT_NEAR(t.train_days, 431.2491503, 1e-6);
  EXPECT_NEAR(t.gpu_hours, 10349979.607, 1e-3);
  EXPECT_NEAR(t.cost, 20699959.214, 1e-3);
  EXPECT_TRUE(std::isinf(time_to_train(1e9, 1e6, 1, 0, 8, 1).train_days));
}

}  // namespace
}  // namespace axo

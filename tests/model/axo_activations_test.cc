// axo's executor's activation memory (ActivationLayout::axo), by hand on gpt2-mini; the executor
// itself holds it byte for byte (tests/executor/parallel: parallel_gpt_test, mixed_precision_test).
#include "model/axo_activations.h"

#include <gtest/gtest.h>

#include "model/memory_model.h"
#include "model/presets.h"

namespace axo {
namespace {

// gpt2-mini (h 128, 4 heads, s 128, vocabulary 256, MLP 512) on one rank, 4 sequences a microbatch:
// m = 512 rows.
ParallelConfig one_rank(Recompute recompute) {
  ParallelConfig c;
  c.microbatch = 4, c.recompute = recompute;
  return c;
}

TEST(AxoActivations, ALayerKeepsLlmcsTensors) {
  const TransformerSpec spec = load_model("gpt2-mini");
  const AxoActivationShapes s = axo_activation_shapes(spec, one_rank(Recompute::none));
  EXPECT_EQ(s.stream, 512 * 128);
  EXPECT_EQ(s.probabilities, 4 * 4 * 128 * 128);  // [b, a, s, s]
  // Six [m, h], four [m] statistics, q k v + attention output + MLP up + activation [m, 3h + h + 4h + 4h].
  EXPECT_EQ(s.layer, 6 * 512 * 128 + 4 * 512 + 512 * (384 + 128 + 512 + 512) + s.probabilities);
  EXPECT_EQ(s.layer_grads, s.layer - s.probabilities);
  EXPECT_EQ(s.head, 512 * 128 + 2 * 512 + 2 * 512 * 256);  // final norm, its statistics, logits and probabilities
  EXPECT_EQ(s.head_grads, 512 * 128 + 512 * 256);
  // Selective recompute keeps no probabilities; full recompute's layers keep their output alone.
  EXPECT_EQ(axo_activation_shapes(spec, one_rank(Recompute::selective)).layer, s.layer - s.probabilities);
}

// axo train measured 30.293 MiB of activations at its peak for this plan (gpt2-mini, one rank,
// microbatch 4, fp32): the stash (the input, 4 layers, the head) and backward's fp32 buffers (two
// stream gradients, a layer's, the head's, the probabilities' gradient).
TEST(AxoActivations, OneRanksPeakIsTheStashAndBackwardsBuffers) {
  const TransformerSpec spec = load_model("gpt2-mini");
  const ParallelConfig c = one_rank(Recompute::none);
  const AxoActivationShapes s = axo_activation_shapes(spec, c);
  const double backward = 4 * (2 * s.stream + s.layer_grads + s.head_grads + s.probabilities);
  const AxoBackwardBytes b = axo_backward_bytes(spec, c);
  EXPECT_EQ(b.every_stage + b.first_stage + b.last_stage, backward);
  EXPECT_EQ(b.first_stage, 0);  // the embedding gathers no rows without sequence parallelism
  const double activations = memory_per_device(spec, c, executor_memory_stack()).activations;
  EXPECT_EQ(activations, 4 * (s.stream + 4 * s.layer + s.head) + backward);
  EXPECT_EQ(activations, 31764480);  // 30.293 MiB
  // Megatron-LM's layout (Korthikanti et al.) holds 21 MiB of the same plan.
  EXPECT_EQ(memory_per_device(spec, c).activations, 21 * 1024 * 1024);
}

// Full recompute and 2-byte training compute in a rolling fp32 view: one input and one layer more
// in fp32, and in 2-byte training the head's too.
TEST(AxoActivations, RollingViewsAreFp32) {
  TransformerSpec spec = load_model("gpt2-mini");
  const ParallelConfig full = one_rank(Recompute::full), none = one_rank(Recompute::none);
  const AxoActivationShapes s = axo_activation_shapes(spec, none);
  EXPECT_EQ(axo_backward_bytes(spec, full).every_stage - axo_backward_bytes(spec, none).every_stage,
            4 * (s.stream + s.layer));
  spec.precision = Precision::bf16;
  const AxoBackwardBytes bf16 = axo_backward_bytes(spec, none);
  EXPECT_EQ(bf16.every_stage + bf16.last_stage,
            4 * (2 * s.stream + s.layer_grads + s.head_grads + s.probabilities + s.stream + s.layer + s.head));
}

}  // namespace
}  // namespace axo

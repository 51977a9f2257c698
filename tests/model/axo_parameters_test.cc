// The parameters a rank of axo's executor holds (axo_parameters.h), by hand on gpt2-mini (h 128,
// qkv 384, MLP 512, 128 positions, vocabulary 256); the executor's layout holds the same, rank by
// rank (tests/executor/parallel/shard_layout_test.cc).
#include "model/axo_parameters.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace axo {
namespace {

ParallelConfig grid(int64_t pipeline, int64_t x, int64_t y, int64_t z) {
  ParallelConfig c;
  c.pipeline = pipeline, c.x = x, c.y = y, c.z = z;
  return c;
}

// x = y = z = 2: each block's Z half (qkv 192 × 64, attproj 64 × 64, fc 256 × 64, fcproj 64 × 256);
// two LayerNorms' 64 columns, weight and bias; the biases along each block's rows.
TEST(AxoParameters, ALayerShardsItsLinearsOverXYZAndItsVectorsOverXOrY) {
  const TransformerSpec spec = load_model("gpt2-mini");
  const AxoParams layer = axo_layer_params(spec, grid(1, 2, 2, 2));
  EXPECT_EQ(layer.linear, (192 * 64 + 64 * 64 + 256 * 64 + 64 * 256) / 2);
  EXPECT_EQ(layer.rows, 2 * 2 * 64);
  EXPECT_EQ(layer.other, 192 + 64 + 256 + 64);
  // One rank holds the whole layer: GPT-2's parameters per layer.
  EXPECT_EQ(axo_layer_params(spec, grid(1, 1, 1, 1)).total(), double(spec.params_per_layer()));
}

// A Z chunk is ⌈block / z⌉, the last chunk padded: over 3, qkv's 384 × 128 is 16,384, attproj's
// 128 × 128 5,462, fc's and fcproj's 512 × 128 21,846.
TEST(AxoParameters, AZChunkRoundsUp) {
  const TransformerSpec spec = load_model("gpt2-mini");
  EXPECT_EQ(axo_layer_params(spec, grid(1, 1, 1, 3)).linear, 16384 + 5462 + 2 * 21846);
}

// The embedding (V' = 256 rows over y, 64 columns; 128 positions) stays whole over Z; on one stage
// the final LayerNorm comes with it, on a pipeline's last stage the head's copy of wte besides.
TEST(AxoParameters, TheEndsStayWholeOverZ) {
  const TransformerSpec spec = load_model("gpt2-mini");
  const AxoParams one_stage = axo_end_params(spec, grid(1, 2, 2, 2), 0);
  EXPECT_EQ(one_stage.other, 128 * 64);
  EXPECT_EQ(one_stage.rows, 128 * 64 + 2 * 64);
  const ParallelConfig pipeline = grid(3, 2, 2, 2);
  EXPECT_EQ(axo_end_params(spec, pipeline, 0).rows, 128 * 64);
  EXPECT_EQ(axo_end_params(spec, pipeline, 1).total(), 0);
  EXPECT_EQ(axo_end_params(spec, pipeline, 2).rows, 2 * 64);
  EXPECT_EQ(axo_end_params(spec, pipeline, 2).other, 128 * 64);
  // One rank: GPT-2's parameters besides its layers (the tied head shares the embedding).
  EXPECT_EQ(axo_end_params(spec, grid(1, 1, 1, 1), 0).total(), double(spec.non_layer_params()));
}

// Under Z every parameter but the linears' is summed over Z as well as data; under sequence
// parallelism over Y the rows' are; otherwise none.
TEST(AxoParameters, WhatIsSummedBeyondTheDataRanks) {
  const AxoParams p{100, 10, 20};
  EXPECT_EQ(p.summed_beyond_data(grid(1, 1, 1, 2)), 30);
  ParallelConfig sequence_parallel = grid(1, 1, 2, 1);
  sequence_parallel.sequence_parallel = true;
  EXPECT_EQ(p.summed_beyond_data(sequence_parallel), 10);
  EXPECT_EQ(p.summed_beyond_data(grid(1, 2, 2, 1)), 0);
}

// In 2-byte training the norms' weights and biases go to the fp32 ops in four windows of h/x = 64
// floats, their gradients in two; fp32 hands them over as they are.
TEST(AxoParameters, TwoByteTrainingWidensTheNormsInFourWindowsAndTheirGradientsInTwo) {
  TransformerSpec spec = load_model("gpt2-mini");
  spec.precision = Precision::bf16;
  const AxoNormWindows windows = axo_norm_window_bytes(spec, grid(1, 2, 1, 1));
  EXPECT_EQ(windows.weights, 4 * 4 * 64);
  EXPECT_EQ(windows.gradients, 2 * 4 * 64);
  spec.precision = Precision::fp32;
  EXPECT_EQ(axo_norm_window_bytes(spec, grid(1, 2, 1, 1)).weights, 0);
  EXPECT_EQ(axo_norm_window_bytes(spec, grid(1, 2, 1, 1)).gradients, 0);
}

}  // namespace
}  // namespace axo

// Tests for the pipeline's layer split (model/stage_partition.h).
#include "model/stage_partition.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "model/presets.h"

namespace axo {
namespace {

std::vector<int64_t> counts(const std::vector<LayerRange>& ranges) {
  std::vector<int64_t> out;
  for (const LayerRange& r : ranges) out.push_back(r.count());
  return out;
}

TEST(PartitionLayers, EqualLayersSplitEquallyWhenTheyDivide) {
  EXPECT_EQ(counts(partition_layers(12, 1.0, 0, 0, 4)), (std::vector<int64_t>{3, 3, 3, 3}));
}

TEST(PartitionLayers, ContiguousAndCoverEveryLayer) {
  const auto ranges = partition_layers(70, 1.0, 0.0, 0.3, 12);  // BLOOM-176B's 70 layers over 12 stages
  ASSERT_EQ(ranges.size(), 12u);
  EXPECT_EQ(ranges.front().begin, 0);
  EXPECT_EQ(ranges.back().end, 70);
  for (size_t k = 1; k < ranges.size(); ++k) EXPECT_EQ(ranges[k].begin, ranges[k - 1].end);
  // Bottleneck 6 layers; the head's chunk takes 5 (5.3 < 6), so 70 = 6·11 + 4 would not do: check the max.
  int64_t most = 0;
  for (const LayerRange& r : ranges) most = std::max(most, r.count());
  EXPECT_EQ(most, 6);
}

TEST(PartitionLayers, TheHeadsChunkTakesFewerLayers) {
  // Head worth 4.47 layers (GPT-2 124M at T = 1024): 12 layers over 2 stages.
  // Stage costs 8 and 4 + 4.47 = 8.47 beat 7 and 5 + 4.47 = 9.47.
  EXPECT_EQ(counts(partition_layers(12, 1.0, 0.0, 4.47, 2)), (std::vector<int64_t>{8, 4}));
}

TEST(PartitionLayers, MinimisesTheLargestChunkCost) {
  // 7 layers over 3 stages with a head of 0.5: 3, 2, 2 (+0.5) → max 3; 2, 2, 3 would be 3.5.
  EXPECT_EQ(counts(partition_layers(7, 1.0, 0.0, 0.5, 3)), (std::vector<int64_t>{3, 2, 2}));
}

TEST(PartitionLayers, FewerLayersThanChunksIsAnInputError) {
  EXPECT_THROW(partition_layers(3, 1.0, 0, 0, 4), InputError);
}

TEST(SplitPipeline, InterleavedChunksGoRoundTheStages) {
  TransformerSpec spec = load_model("gpt3-175b");
  const PipelineSplit split = split_pipeline(spec, 8, 3);  // 96 layers, 24 chunks of 4
  EXPECT_EQ(split.interleave(), 3);
  EXPECT_EQ(split.chunk(0, 0).begin, 0);
  EXPECT_EQ(split.chunk(1, 0).begin, 4);   // chunk 1 is stage 1's first
  EXPECT_EQ(split.chunk(0, 1).begin, 32);  // chunk 8 is stage 0's second
  EXPECT_EQ(split.stage_layers(7), 12);
  EXPECT_EQ(split.max_stage_layers(), 12);
  EXPECT_EQ(split.text(), "4+4+4,4+4+4,4+4+4,4+4+4,4+4+4,4+4+4,4+4+4,4+4+4");
}

// The first N layers of each of a stage's chunks: all of a chunk that holds fewer.
TEST(SplitPipeline, LeadingLayersTakeTheFirstOfEachChunk) {
  const PipelineSplit split({{0, 3}, {3, 5}, {5, 8}, {8, 9}}, 2);  // stage 0: chunks of 3 and 3, stage 1: 2 and 1
  EXPECT_EQ(split.leading_layers(0, 2), 4);
  EXPECT_EQ(split.leading_layers(1, 2), 3);
  EXPECT_EQ(split.leading_layers(1, 1), 2);
  EXPECT_EQ(split.leading_layers(0, 9), 6);
}

TEST(SplitPipeline, RecomputeLayersAtMostTheLargestChunk) {
  const PipelineSplit split({{0, 3}, {3, 5}, {5, 8}, {8, 9}}, 2);  // chunks of 3, 2, 3 and 1
  EXPECT_EQ(split.max_chunk_layers(), 3);
  EXPECT_EQ(recompute_layers_problem(split, 0), "");  // every layer
  EXPECT_EQ(recompute_layers_problem(split, 3), "");  // all of the largest, all of the others
  EXPECT_EQ(recompute_layers_problem(split, 4),
            "recompute_layers=4 is more than the 3 layers of the largest of the pipeline=2 × interleave=2 chunks "
            "(it counts the layers of each chunk)");
  const PipelineSplit whole({{0, 12}}, 1);
  EXPECT_EQ(recompute_layers_problem(whole, 13), "recompute_layers=13 is more than the 12 layers of the model");
}

TEST(SplitPipeline, SmallModelsGiveTheHeadsStageFewerLayers) {
  TransformerSpec spec = load_model("gpt2-124m");
  spec.seq_len = 1024;
  EXPECT_EQ(split_pipeline(spec, 2, 1).text(), "8,4");
}

// llama3-8b's head (2·s·h·V, V = 128256) weighs as much as 1.84 of its layers, so its 32
// layers over 2 stages are 17,15 though they divide: 17 < 15 + 1.84 < 16 + 1.84.
TEST(SplitPipeline, HeadWeightUnbalancesLayersThatDivide) {
  const TransformerSpec spec = load_model("llama3-8b");
  const SplitWeights weights = split_weights(spec);
  EXPECT_NEAR(weights.head / weights.layer, 1.8419, 1e-4);
  EXPECT_EQ(split_pipeline(spec, 2, 1).text(), "17,15");
  EXPECT_EQ(split_pipeline(spec, 2, 4).text(), "5+4+4+4,4+4+4+3");
}

TEST(SplitPipeline, TooManyChunksNamesTheUsersValues) {
  TransformerSpec spec = load_model("gpt2-124m");
  try {
    split_pipeline(spec, 4, 4);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline=4 × interleave=4 chunks for layers=12"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace axo

// The local parameter layout of a rank of the 4D grid, for every rank of a
// grid at once (no MPI needed): each rank holds its chunks' layers in chunk
// order, the embedding on the first stage and the head on the last, and
// over all ranks the owned elements cover llm.c's full vector exactly once.
#include "executor/parallel/shard_layout.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>

#include "model/axo_parameters.h"
#include "model/error.h"

namespace axo {
namespace {

GptShape shape_of(int64_t layers) {
  GptShape g;
  g.layers = layers, g.heads = 4, g.channels = 32, g.max_seq = 16, g.vocab = 100, g.padded_vocab = 128;
  return g;
}

ParallelConfig grid_of(int64_t P, int64_t v, int64_t x, int64_t y, int64_t z, int64_t data) {
  ParallelConfig c;
  c.pipeline = P, c.interleave = v, c.x = x, c.y = y, c.z = z, c.data = data;
  return c;
}

// The layers a layout holds, in its buffer's order.
std::vector<int64_t> layers_held(const ShardLayout& layout) {
  std::vector<int64_t> layers;
  for (const LocalTensor& t : layout.tensors()) {
    if (t.layer >= 0 && (layers.empty() || layers.back() != t.layer)) layers.push_back(t.layer);
  }
  return layers;
}

TEST(ShardLayoutTest, EachStageHoldsItsChunksInOrderWithTheEmbeddingFirstAndTheHeadLast) {
  const GptShape shape = shape_of(7);
  const ParallelConfig config = grid_of(3, 2, 1, 1, 1, 1);
  const PipelineSplit split = split_pipeline(gpt_spec(shape, 8), 3, 2);
  std::vector<int> stage_of(7, -1);
  for (int s = 0; s < 3; ++s) {
    GridCoords at;
    at.pipeline = s;
    const ShardLayout layout(shape, config, at, split);
    ASSERT_EQ(layout.chunks().size(), 2u);
    std::vector<int64_t> expected;
    for (int64_t c = 0; c < 2; ++c) {
      EXPECT_EQ(layout.chunks()[size_t(c)], split.chunk(s, c));
      for (int64_t l = split.chunk(s, c).begin; l < split.chunk(s, c).end; ++l) expected.push_back(l);
    }
    EXPECT_EQ(layers_held(layout), expected) << "stage " << s;
    for (int64_t l : expected) {
      EXPECT_EQ(stage_of[size_t(l)], -1) << "layer " << l << " on two stages";
      stage_of[size_t(l)] = s;
    }
    EXPECT_EQ(layout.find(GptTensor::wpe) != nullptr, s == 0);
    EXPECT_EQ(layout.find(GptTensor::lnfw) != nullptr, s == 2);
    // Buckets follow the buffer: the embedding (-1), the layers in chunk order, the head (7).
    std::vector<int64_t> bucket_layers;
    for (const GradientBucket& b : layout.buckets()) {
      if (bucket_layers.empty() || bucket_layers.back() != b.layer) bucket_layers.push_back(b.layer);
    }
    if (s == 0) expected.insert(expected.begin(), -1);
    if (s == 2) expected.push_back(7);
    EXPECT_EQ(bucket_layers, expected) << "stage " << s;
  }
  for (int64_t l = 0; l < 7; ++l) EXPECT_NE(stage_of[size_t(l)], -1) << "layer " << l << " on no stage";
}

TEST(ShardLayoutTest, TheOwnedShardsOfEveryRankCoverTheModelOnce) {
  const GptShape shape = shape_of(6);
  const int64_t count = gpt_parameter_count(shape);
  std::vector<float> full(static_cast<size_t>(count));
  std::mt19937 rng(3);
  for (float& value : full) value = std::uniform_real_distribution<float>(-1, 1)(rng);
  ParallelConfig with_context = grid_of(2, 1, 2, 1, 1, 2);
  with_context.context = 2;  // context ranks hold the same shards; one owns them
  for (const ParallelConfig& config :
       {grid_of(2, 3, 2, 2, 2, 1), grid_of(3, 2, 1, 2, 1, 2), grid_of(2, 2, 2, 1, 3, 1), with_context}) {
    const PipelineSplit split = split_pipeline(gpt_spec(shape, 8), config.pipeline, config.interleave);
    std::vector<float> sum(static_cast<size_t>(count), 0.0f);
    for (int rank = 0; rank < config.gpus(); ++rank) {
      const ShardLayout layout(shape, config, grid_coords(config, rank), split);
      std::vector<float> local(size_t(layout.size()), 0.0f);
      layout.scatter(full.data(), local.data());
      layout.add_owned(local.data(), sum.data());
    }
    EXPECT_EQ(sum, full) << "pipeline " << config.pipeline << " × interleave " << config.interleave;
  }
}

// The memory model counts each rank's parameters by this layout's rule (model/axo_parameters.h):
// every rank's size is its stage's layers' count and its ends', Z chunks padded included, and the
// elements summed beyond the data ranks (over Z, or Y under sequence parallelism) are the ones it
// says.
TEST(ShardLayoutTest, EveryRankHoldsWhatTheMemoryModelCounts) {
  const GptShape shape = shape_of(6);
  ParallelConfig sequence_parallel = grid_of(2, 1, 1, 2, 2, 1);
  sequence_parallel.sequence_parallel = true;
  for (const ParallelConfig& config : {grid_of(2, 3, 2, 2, 2, 1), grid_of(1, 1, 1, 2, 3, 2), grid_of(3, 1, 2, 1, 1, 1),
                                       grid_of(1, 1, 1, 1, 1, 1), sequence_parallel}) {
    const TransformerSpec spec = gpt_spec(shape, 8);
    const PipelineSplit split = split_pipeline(spec, config.pipeline, config.interleave);
    for (int rank = 0; rank < config.gpus(); ++rank) {
      const GridCoords at = grid_coords(config, rank);
      const ShardLayout layout(shape, config, at, split);
      AxoParams counted = double(split.stage_layers(at.pipeline)) * axo_layer_params(spec, config);
      counted += axo_end_params(spec, config, at.pipeline);
      EXPECT_EQ(double(layout.size()), counted.total()) << "rank " << rank << " of " << config.gpus();
      double beyond_data = 0;
      for (const LocalTensor& t : layout.tensors()) {
        const bool over_z = config.z > 1 && t.group != GradientGroup::data;
        const bool over_y = config.y > 1 && t.group == GradientGroup::y_z_and_data;
        if (over_z || over_y) beyond_data += double(t.size);
      }
      EXPECT_EQ(beyond_data, counted.summed_beyond_data(config)) << "rank " << rank << " of " << config.gpus();
    }
  }
}

TEST(ShardLayoutTest, RejectsASplitThatIsNotThePlans) {
  const GptShape shape = shape_of(6);
  const PipelineSplit split = split_pipeline(gpt_spec(shape, 8), 2, 1);
  EXPECT_THROW(ShardLayout(shape, grid_of(2, 3, 1, 1, 1, 1), GridCoords{}, split), std::logic_error);
  EXPECT_THROW(ShardLayout(shape_of(6), grid_of(1, 1, 1, 3, 1, 1), GridCoords{}, split_pipeline(gpt_spec(shape, 8), 1, 1)),
               InputError);
}

// Sequence parallelism with z > 1 (torchtitan's FSDP + sequence-parallel TP):
// the norms and wpe see this (y, z) rank's rows only, so their gradients sum
// over y, z and data; they stay whole on every Z rank, the linears' Z chunks
// as without it; the owned shards still cover the model once. A split
// channel axis (x > 1) has no row layout and is refused, naming x.
TEST(ShardLayoutTest, SequenceParallelWithZSumsTheRowParametersOverYAndZ) {
  const GptShape shape = shape_of(4);
  ParallelConfig config = grid_of(2, 1, 1, 2, 2, 2);
  config.sequence_parallel = true;
  const PipelineSplit split = split_pipeline(gpt_spec(shape, 8), 2, 1);
  const ParallelConfig plain = grid_of(2, 1, 1, 2, 2, 2);
  const int64_t count = gpt_parameter_count(shape);
  std::vector<float> full(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) full[size_t(i)] = float(i % 97) - 48;
  std::vector<float> sum(static_cast<size_t>(count), 0.0f);
  for (int rank = 0; rank < config.gpus(); ++rank) {
    const GridCoords at = grid_coords(config, rank);
    const ShardLayout layout(shape, config, at, split), without(shape, plain, at, split);
    ASSERT_EQ(layout.size(), without.size());
    for (const LocalTensor& t : layout.tensors()) {
      const bool row = t.kind == GptTensor::ln1w || t.kind == GptTensor::ln1b || t.kind == GptTensor::ln2w ||
                       t.kind == GptTensor::ln2b || t.kind == GptTensor::lnfw || t.kind == GptTensor::lnfb ||
                       t.kind == GptTensor::wpe;
      const LocalTensor* same = without.find(t.kind, t.layer);
      ASSERT_NE(same, nullptr);
      EXPECT_EQ(t.size, same->size);
      EXPECT_EQ(t.group, row ? GradientGroup::y_z_and_data : same->group) << int(t.kind) << " layer " << t.layer;
      if (row) {
        EXPECT_EQ(t.size, t.kind == GptTensor::wpe ? shape.max_seq * shape.channels : shape.channels);
      }
    }
    std::vector<float> local(size_t(layout.size()), 0.0f);
    layout.scatter(full.data(), local.data());
    layout.add_owned(local.data(), sum.data());
  }
  EXPECT_EQ(sum, full);
  ParallelConfig x2 = grid_of(1, 1, 2, 2, 2, 1);
  x2.sequence_parallel = true;
  try {
    ShardLayout(shape, x2, GridCoords{}, split_pipeline(gpt_spec(shape, 8), 1, 1));
    ADD_FAILURE() << "x = 2 with sequence parallelism accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x = 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace axo

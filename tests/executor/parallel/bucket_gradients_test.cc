// Zero 2's per-bucket gradient buffers (bucket_gradients.h): a bucket is
// taken zeroed on its first write, holds what was written through it, and
// gives its bytes back on release; between microbatches nothing is booked.
#include "executor/parallel/bucket_gradients.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace axo {
namespace {

ShardLayout two_layers() {
  GptShape g;
  g.layers = 2, g.heads = 4, g.channels = 32, g.max_seq = 16, g.vocab = 100, g.padded_vocab = 128;
  ParallelConfig config;
  return ShardLayout(g, config, GridCoords{}, split_pipeline(gpt_spec(g, 8), 1, 1));
}

TEST(BucketGradientsTest, ABucketIsTakenZeroedOnItsFirstWriteAndGivenBackOnRelease) {
  const ShardLayout layout = two_layers();
  DeviceMemory memory;
  BucketGradients buckets(layout, false, cpu::HalfFormat::bf16, memory);
  const GradientBucket& b = layout.buckets()[1];
  EXPECT_FALSE(buckets.held(1));
  EXPECT_EQ(memory.in_use(DeviceUse::gradients), 0);
  ShardGrad last = buckets.at(b.offset + b.size - 1);  // the bucket's last element
  EXPECT_TRUE(buckets.held(1));
  EXPECT_FALSE(buckets.held(0));
  EXPECT_EQ(memory.in_use(DeviceUse::gradients), int64_t(sizeof(float)) * b.size);
  EXPECT_EQ(*last.f32, 0.0f);
  *last.f32 = 3.0f;
  EXPECT_EQ(buckets.bucket(1).f32 + (b.size - 1), last.f32);  // the same element through the bucket's view
  EXPECT_EQ(*buckets.at(b.offset + b.size - 1).f32, 3.0f);     // a held bucket keeps its values
  buckets.release(1);
  EXPECT_FALSE(buckets.held(1));
  EXPECT_EQ(memory.in_use(DeviceUse::gradients), 0);
  EXPECT_EQ(*buckets.at(b.offset + b.size - 1).f32, 0.0f);  // taken again: zeroed
  EXPECT_THROW(buckets.bucket(0), std::logic_error);
  EXPECT_THROW(buckets.at(layout.size()), std::logic_error);
}

TEST(BucketGradientsTest, TwoByteBucketsBookTwoBytesPerElement) {
  const ShardLayout layout = two_layers();
  DeviceMemory memory;
  BucketGradients buckets(layout, true, cpu::HalfFormat::bf16, memory);
  const GradientBucket& b = layout.buckets().back();
  const ShardGrad first = buckets.at(b.offset);
  ASSERT_NE(first.half, nullptr);
  EXPECT_EQ(first.format, cpu::HalfFormat::bf16);
  EXPECT_EQ(memory.in_use(DeviceUse::gradients), 2 * b.size);
  buckets.release(layout.buckets().size() - 1);
  EXPECT_EQ(memory.in_use(DeviceUse::gradients), 0);
}

}  // namespace
}  // namespace axo

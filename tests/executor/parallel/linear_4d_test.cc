// Linear4dScratch's pools (BufferPool, linear_4d.h): a block is reused where one holds it, grown
// to exactly what is asked (a vector's own growth would book up to twice it), and blocks, 2-byte
// blocks and chunks pool apart, so a stage books the blocks it has in flight and no more
// (parallel_gpt_test and mixed_precision_test check the stage).
#include "executor/parallel/linear_4d.h"

#include <gtest/gtest.h>

namespace axo {
namespace {

constexpr int64_t kFloat = 4;

TEST(Linear4dScratch, ABlockIsReusedAndGrownToExactlyWhatIsAsked) {
  DeviceMemory memory;
  Linear4dScratch scratch(memory);
  scratch.blocks.give_back(scratch.blocks.take(3072));
  scratch.blocks.give_back(scratch.blocks.take(1024));  // the 3,072 block again
  EXPECT_EQ(memory.in_use(DeviceUse::comm_buffers), kFloat * 3072);
  scratch.blocks.give_back(scratch.blocks.take(4096));  // grown to 4,096, not 6,144
  EXPECT_EQ(memory.in_use(DeviceUse::comm_buffers), kFloat * 4096);
}

TEST(Linear4dScratch, TheSmallestBlockThatHoldsASizeIsTaken) {
  DeviceMemory memory;
  Linear4dScratch scratch(memory);
  DeviceFloats large = scratch.blocks.take(4096), small = scratch.blocks.take(1024);
  scratch.blocks.give_back(std::move(large)), scratch.blocks.give_back(std::move(small));
  const DeviceFloats taken = scratch.blocks.take(1000);
  EXPECT_EQ(taken.capacity(), 1024u);
  const DeviceFloats next = scratch.blocks.take(2000);  // the 4,096 one, not the 1,024 one grown
  EXPECT_EQ(next.capacity(), 4096u);
  EXPECT_EQ(memory.in_use(DeviceUse::comm_buffers), kFloat * (4096 + 1024));
}

TEST(Linear4dScratch, ChunksPoolApartFromBlocks) {
  DeviceMemory memory;
  Linear4dScratch scratch(memory);
  scratch.blocks.give_back(scratch.blocks.take(4096));
  const DeviceFloats chunk = scratch.chunks.take(512);  // a new chunk: the block stays for the next block
  EXPECT_EQ(chunk.capacity(), 512u);
  EXPECT_EQ(memory.in_use(DeviceUse::comm_buffers), kFloat * (4096 + 512));
}

TEST(Linear4dScratch, TwoByteBlocksPoolApartInTwoBytesAnElement) {
  DeviceMemory memory;
  Linear4dScratch scratch(memory);
  scratch.blocks.give_back(scratch.blocks.take(4096));
  scratch.half_blocks.give_back(scratch.half_blocks.take(4096));  // not the fp32 block: a 2-byte one beside it
  scratch.half_blocks.give_back(scratch.half_blocks.take(2048));  // the 2-byte block again
  EXPECT_EQ(memory.in_use(DeviceUse::comm_buffers), kFloat * 4096 + 2 * 4096);
}

}  // namespace
}  // namespace axo

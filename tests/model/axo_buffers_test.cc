// axo's executor's tensor-parallel communication buffers (axo_buffers.h), by hand on gpt2-mini
// (h 128, qkv 384, MLP 512, s 128); the executor holds them within 10% on Z-sharded grids
// (tests/executor/parallel/parallel_gpt_test: ZShardedBuffersDoNotGrowWithTheLayersOrTheMicrobatches).
#include "model/axo_buffers.h"

#include <gtest/gtest.h>

#include "model/memory_model.h"
#include "model/presets.h"

namespace axo {
namespace {

ParallelConfig grid(int64_t x, int64_t y, int64_t z) {
  ParallelConfig c;
  c.x = x, c.y = y, c.z = z, c.microbatch = 4;
  return c;
}

TEST(AxoBuffers, OneRankHoldsNone) {
  EXPECT_EQ(axo_linear_buffer_bytes(load_model("gpt2-mini"), grid(1, 1, 1)), 0);
}

// m = 4 · 128 = 512 rows: the transposed layers' [m, h] rows, and dX's [m + m/2, h] before its reduce-scatter.
TEST(AxoBuffers, SequenceParallelismHoldsTheRowsAndThePartial) {
  ParallelConfig c = grid(1, 2, 1);
  c.sequence_parallel = true;
  EXPECT_EQ(axo_linear_buffer_bytes(load_model("gpt2-mini"), c), 4 * (512 * 128 + (512 + 256) * 128));
  c.sequence_parallel = false;  // dX [m, h] all-reduced in place of the rows
  EXPECT_EQ(axo_linear_buffer_bytes(load_model("gpt2-mini"), c), 4 * 512 * 128);
}

// x 2, z 2: m = (4/2) · 128 = 256 rows; fcproj's dX [m, 512] over X; the largest block fc's (or
// fcproj's) 512 × 64, its z-th 16,384. With the overlaps three blocks and the reduce-scatter's
// chunk in fp32; without them one block and one chunk (in bf16 the widened send's, given back
// before the receive takes it), with them in bf16 the two prefetched gathers' sends besides.
TEST(AxoBuffers, ZShardingHoldsTheBlocksInFlight) {
  TransformerSpec spec = load_model("gpt2-mini");
  ParallelConfig c = grid(2, 1, 2);
  EXPECT_EQ(axo_linear_buffer_bytes(spec, c), 4 * (256 * 512 + 3 * 32768 + 16384));
  c.overlap = false;
  spec.precision = Precision::bf16;
  EXPECT_EQ(axo_linear_buffer_bytes(spec, c), 4 * (256 * 512 + 32768 + 16384));
  c.overlap = true;  // two gathers prefetched: two chunks widened
  EXPECT_EQ(axo_linear_buffer_bytes(spec, c), 4 * (256 * 512 + 3 * 32768 + 3 * 16384));
}

// The memory model books them as axo's executor's communication buffers, and Megatron-LM's stack
// the gathered 2-byte weights it prefetches (two of the largest linear's 512 × 128 / 2).
TEST(AxoBuffers, TheMemoryModelBooksThemForAxosExecutorOnly) {
  TransformerSpec spec = load_model("gpt2-mini");
  spec.precision = Precision::bf16;
  const ParallelConfig c = grid(2, 1, 2);
  EXPECT_EQ(memory_per_device(spec, c, executor_memory_stack()).comm_buffers, axo_linear_buffer_bytes(spec, c));
  EXPECT_EQ(memory_per_device(spec, c).comm_buffers, 2 * 2 * 512 * 128 / 2);
}

}  // namespace
}  // namespace axo

// axo's executor's communication buffers (axo_buffers.h), by hand on gpt2-mini (h 128, qkv 384,
// MLP 512, s 128); the executor holds them (tests/executor/parallel: parallel_gpt_test's Z-sharded
// grids to the byte, mixed_precision_test's data-parallel ones within 1%, zero 2's within 4%).
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

// x 2, z 2: m = (4/2) · 128 = 256 rows; fcproj's dX [m, 512] over X, and the norms' two sums a row;
// the largest block fc's (or fcproj's) 512 × 64, its z-th 16,384. In fp32 with the overlaps three
// blocks and the reduce-scatter's chunk; in bf16 the gathered blocks in 2 bytes, the dW blocks in 4.
TEST(AxoBuffers, ZShardingHoldsTheBlocksInFlight) {
  TransformerSpec spec = load_model("gpt2-mini");
  ParallelConfig c = grid(2, 1, 2);
  const int64_t partial_and_sums = 256 * 512 + 2 * 256;
  EXPECT_EQ(axo_linear_buffer_bytes(spec, c), 4 * (partial_and_sums + 3 * 32768 + 16384));
  c.overlap = false;
  spec.precision = Precision::bf16;
  // Gathered as stored (2 bytes), dW in fp32.
  EXPECT_EQ(axo_linear_buffer_bytes(spec, c), 4 * (partial_and_sums + 16384) + (2 + 4) * 32768);
  c.overlap = true;  // the current and the prefetched block; this dW and the one reducing
  EXPECT_EQ(axo_linear_buffer_bytes(spec, c), 4 * (partial_and_sums + 16384) + (2 + 4) * 2 * 32768);
}

// In 2-byte training each linear keeps an fp32 column of its outputs: qkv 384/y, attproj 128/x,
// fc 512/y, fcproj 128/x.
TEST(AxoBuffers, TwoByteLinearsKeepAnFp32BiasColumn) {
  TransformerSpec spec = load_model("gpt2-mini");
  EXPECT_EQ(axo_linear_buffer_bytes_per_layer(spec, grid(2, 2, 1)), 0);  // fp32: the bias itself
  spec.precision = Precision::bf16;
  EXPECT_EQ(axo_linear_buffer_bytes_per_layer(spec, grid(2, 2, 1)), 4 * (192 + 64 + 256 + 64));
}

// A layer's 100 parameters: 90 in its linears' bucket, 4 norm and 6 bias elements in another.
const AxoParams kLayer{90, 4, 6};

// 1,000 local parameters, 100 of them a layer's, 30 the embedding's, over 4 data ranks; an
// embedding larger than a layer (GPT-2's is 5.6 of its layers) sets zero 2's bucket in flight.
TEST(AxoBuffers, TheDataParallelReductionsBuffersByZero) {
  ParallelConfig c = grid(1, 1, 1);
  c.data = 4;
  auto bytes = [&](int zero, double e) {
    c.zero = zero;
    return axo_data_parallel_bytes(c, e, AxoParams{1000, 0, 0}, kLayer, 30);
  };
  EXPECT_EQ(bytes(0, 4).comm_buffers, 0);          // fp32 buckets reduce in place
  EXPECT_EQ(bytes(0, 2).comm_buffers, 4 * 1000);   // every bucket's fp32 copy
  EXPECT_EQ(bytes(1, 4).comm_buffers, 1000);       // every received piece: 4 bytes over 4 ranks
  EXPECT_EQ(bytes(1, 2).comm_buffers, 1000 + 4 * 1000);
  EXPECT_EQ(bytes(2, 2).comm_buffers, 4 * 1.25 * 90);  // a layer's largest bucket, copied and received
  EXPECT_EQ(bytes(2, 2).gradients, 2 * (100 + 30));     // one stage: a layer's buckets and the embedding's
  c.pipeline = 2;
  EXPECT_EQ(bytes(2, 2).gradients, 2 * 100);  // a pipeline's end: the larger
  c.pipeline = 1;
  EXPECT_EQ(bytes(1, 2).gradients, 0);
  c.zero = 2;
  EXPECT_EQ(axo_data_parallel_bytes(c, 2, AxoParams{1000, 0, 0}, kLayer, 300).comm_buffers, 4 * 1.25 * 300);
  c.data = 1;
  EXPECT_EQ(bytes(1, 2).comm_buffers, 0);  // one data rank, no Z or Y part: nothing to reduce
}

// With one data rank every zero reduces as zero 0 does: in 2-byte training the buckets summed over
// Z (all but the linears: 40 rows' and 60 other parameters of 1,000) or, under sequence parallelism,
// over Y (the rows' alone) are copied to fp32; fp32 reduces in place.
TEST(AxoBuffers, OneDataRankCopiesWhatZOrYSum) {
  const AxoParams local{900, 40, 60};
  for (int zero : {0, 1, 2}) {
    ParallelConfig c = grid(1, 1, 2);
    c.zero = zero;
    EXPECT_EQ(axo_data_parallel_bytes(c, 2, local, kLayer, 30).comm_buffers, 4 * (40 + 60));
    EXPECT_EQ(axo_data_parallel_bytes(c, 4, local, kLayer, 30).comm_buffers, 0);
    c = grid(1, 2, 1);
    c.sequence_parallel = true, c.zero = zero;
    EXPECT_EQ(axo_data_parallel_bytes(c, 2, local, kLayer, 30).comm_buffers, 4 * 40);
    c.sequence_parallel = false;
    EXPECT_EQ(axo_data_parallel_bytes(c, 2, local, kLayer, 30).comm_buffers, 0);
  }
}

// On a pipeline of 2-byte training the first and last stage sum the tied embedding in an fp32
// copy of their wte (gpt2-mini's 256 rows over y = 1, 64 columns over x = 2) on zero 0's path:
// zero 0, or zero 1 and 2 over one data rank. None in fp32, on one stage, or sharded by zero.
TEST(AxoBuffers, APipelinesEndsSumTheTiedEmbeddingInAnFp32Copy) {
  TransformerSpec spec = load_model("gpt2-mini");
  spec.precision = Precision::bf16;
  ParallelConfig c = grid(2, 1, 1);
  c.pipeline = 2;
  EXPECT_EQ(axo_tied_embedding_bytes(spec, c), 4 * 256 * 64);
  c.zero = 1;
  EXPECT_EQ(axo_tied_embedding_bytes(spec, c), 4 * 256 * 64);
  c.data = 2;
  EXPECT_EQ(axo_tied_embedding_bytes(spec, c), 0);
  c.zero = 0;
  EXPECT_EQ(axo_tied_embedding_bytes(spec, c), 4 * 256 * 64);
  c.pipeline = 1;
  EXPECT_EQ(axo_tied_embedding_bytes(spec, c), 0);
  c.pipeline = 2, spec.precision = Precision::fp32;
  EXPECT_EQ(axo_tied_embedding_bytes(spec, c), 0);
}

// The memory model books them as axo's executor's communication buffers (a stage of gpt2-mini's 4
// layers, with one data rank the fp32 copies of the parameters summed over Z: 4 layers' 1,024 biases
// and 256 LayerNorm elements, wte's 256 × 64, wpe's 128 × 64, lnf's 128), and Megatron-LM's stack the
// gathered 2-byte weights it prefetches (two of the largest linear's 512 × 128 / 2).
TEST(AxoBuffers, TheMemoryModelBooksThemForAxosExecutorOnly) {
  TransformerSpec spec = load_model("gpt2-mini");
  spec.precision = Precision::bf16;
  const ParallelConfig c = grid(2, 1, 2);
  const double summed_over_z = 4 * (384 + 64 + 512 + 64 + 256) + 256 * 64 + 128 * 64 + 128;
  EXPECT_EQ(memory_per_device(spec, c, executor_memory_stack()).comm_buffers,
            axo_linear_buffer_bytes(spec, c) + 4 * axo_linear_buffer_bytes_per_layer(spec, c) + 4 * summed_over_z);
  EXPECT_EQ(memory_per_device(spec, c).comm_buffers, 2 * 2 * 512 * 128 / 2);
}

// A pipeline's messages are fp32 microbatch streams (here [512, 128]): the receives a stage keeps
// posted and two sends. Message-driven, one receive per stream: four stages of three chunks hold
// 3·2 − 1 on an end and 3·2 in the middle; without interleaving one and two; 1F1B one; one stage
// none, of two chunks two.
TEST(AxoBuffers, APipelineStageHoldsItsPostedReceivesAndTwoSends) {
  const double stream = 512 * 128, message = 4 * stream;
  ParallelConfig c;
  c.pipeline = 4, c.interleave = 3;
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::message_driven, stream, 0), (5 + 2) * message);
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::message_driven, stream, 2), (6 + 2) * message);
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::message_driven, stream, 3), (5 + 2) * message);
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::one_f_one_b, stream, 2), (1 + 2) * message);
  c.interleave = 1;
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::message_driven, stream, 0), (1 + 2) * message);
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::message_driven, stream, 1), (2 + 2) * message);
  c.pipeline = 1;
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::message_driven, stream, 0), 0);
  c.interleave = 2;  // one stage of two chunks passes the stream between them: a receive each way
  EXPECT_EQ(axo_pipeline_buffer_bytes(c, Schedule::message_driven, stream, 0), (2 + 2) * message);
  c.interleave = 1;
  // In bf16 training too, and in the model's stage memory under axo's layout, beside the linears'.
  TransformerSpec spec = load_model("gpt2-mini");
  spec.precision = Precision::bf16;
  c = grid(1, 1, 1);
  c.pipeline = 2;
  const PipelineSplit split = split_pipeline(spec, 2, 1);
  ASSERT_EQ(split.stage_layers(0), 2);
  EXPECT_EQ(stage_memory(spec, c, split, 0, executor_memory_stack()).comm_buffers,
            3 * message + 2 * axo_linear_buffer_bytes_per_layer(spec, c));
}

}  // namespace
}  // namespace axo

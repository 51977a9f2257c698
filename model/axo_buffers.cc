// axo's executor's communication buffers (see axo_buffers.h).
#include "model/axo_buffers.h"

#include <algorithm>
#include <cmath>

#include "model/axo_parameters.h"
#include "model/cost_shapes.h"
#include "model/memory_model.h"

namespace axo {

namespace {

constexpr double kFloat = 4;  // the executor's buffers are fp32, all but 2-byte gathered blocks

// The bytes of the Z pools (linear_4d.h): gathered blocks as stored, fp32 dW blocks, the
// reduce-scatter's fp32 receive chunk, each as large as the largest linear's. In fp32 one pool holds
// both kinds of block: with overlap the prefetched gather, the dW being computed and the one
// reducing, else one. In 2-byte training gathered blocks pool apart: the current one and the
// prefetched one, beside this dW and the one reducing (one of each without overlap).
double z_pool_bytes(const TransformerSpec& spec, const ParallelConfig& c) {
  if (c.z == 1) return 0;
  double chunk = 0;
  for (const AxoLinearBlock& b : axo_linear_blocks(spec, c)) {
    chunk = std::max(chunk, std::ceil(b.n * b.k / double(c.z)));
  }
  const double block = chunk * double(c.z), receive = kFloat * chunk;
  if (spec.precision == Precision::fp32) return kFloat * (c.overlap ? 3 : 1) * block + receive;
  return (bytes_per_element(spec.precision) + kFloat) * (c.overlap ? 2 : 1) * block + receive;
}

}  // namespace

double axo_linear_buffer_bytes(const TransformerSpec& spec, const ParallelConfig& c) {
  const double m = tokens_per_rank(spec, c), h = double(spec.hidden) / double(c.x);
  const bool sequence_parallel = c.sequence_parallel && c.y > 1;
  const double rows = sequence_parallel ? m * h : 0;
  double partial = 0;
  if (c.y > 1) partial = (m + (sequence_parallel ? m / double(c.y) : 0)) * h;
  if (c.x > 1) partial = std::max(partial, m * double(spec.ffn_hidden) / double(c.y));
  const double norm_sums = c.x > 1 ? 2 * m : 0;  // sequence parallelism needs x = 1
  return kFloat * (rows + partial + norm_sums) + z_pool_bytes(spec, c);
}

double axo_linear_buffer_bytes_per_layer(const TransformerSpec& spec, const ParallelConfig& c) {
  if (spec.precision == Precision::fp32) return 0;
  double columns = 0;
  for (const AxoLinearBlock& b : axo_linear_blocks(spec, c)) columns += b.n;
  return kFloat * columns;
}

double axo_pipeline_buffer_bytes(const ParallelConfig& c, Schedule schedule, double stream, int64_t stage) {
  const int64_t p = c.pipeline, v = c.interleave;
  if (p * v == 1) return 0;
  const int64_t receives = schedule == Schedule::one_f_one_b ? 1 : 2 * v - (stage == 0) - (stage == p - 1);
  return kFloat * stream * double(receives + 2);
}

double axo_tied_embedding_bytes(const TransformerSpec& spec, const ParallelConfig& c) {
  if (sharded_optimizer(c) || c.pipeline == 1 || !spec.tied_embeddings || spec.precision == Precision::fp32) return 0;
  return kFloat * axo_vocabulary_params(spec, c);
}

AxoDataParallelBytes axo_data_parallel_bytes(const ParallelConfig& c, double e, const AxoParams& local,
                                             const AxoParams& layer, double end_bucket) {
  const double D = double(zero_shards(c)), copies = e < kFloat ? kFloat : 0;
  AxoDataParallelBytes bytes;
  if (D == 1) {  // zero 0's reduction whatever the zero: the buckets summed over Z or Y alone
    bytes.comm_buffers = copies * local.summed_beyond_data(c);
    return bytes;
  }
  if (c.zero == 0) bytes.comm_buffers = copies * local.total();
  if (c.zero == 1) bytes.comm_buffers = (kFloat / D + copies) * local.total();
  if (c.zero >= 2) {
    const double largest = std::max(layer.total(), end_bucket);
    // A layer's linears are one bucket, its norms and biases (summed over Z as well) another.
    const double largest_bucket = std::max({layer.linear, layer.rows + layer.other, end_bucket});
    bytes.comm_buffers = kFloat * (1 + 1 / D) * largest_bucket;
    // One stage fills the embedding's bucket from the head's backward on, beside each layer's.
    bytes.gradients = e * (c.pipeline == 1 ? layer.total() + end_bucket : largest);
  }
  return bytes;
}

}  // namespace axo

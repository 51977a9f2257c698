// The communication buffers of axo's own executor (ActivationLayout::axo), in
// bytes: its tensor-parallel layers' (executor/parallel/linear_4d.{h,cc}) and,
// below, its pipeline messages and its data-parallel reduction's. With
// m rows of a microbatch on a rank (axo_activations.h) and each linear's block
// n_ × k_ (qkv, fc: n/y × h/x; attproj: h/x × h/y; fcproj: h/x × ffn/y):
//   rows:    under sequence parallelism over y > 1, [m, h/x] (a transposed
//            layer's output before its reduce-scatter, dY's gathered rows);
//   partial: dX before its reduction, [m + m/y, h/x] for qkv and fc over y > 1
//            (the reduce-scatter's rows after m with sequence parallelism),
//            [m, ffn/y] for fcproj over x > 1;
//   with z > 1, the pools: whole blocks (n_·k_ padded to z), gathered as
//            stored and their dW in fp32, as many as are in flight at once
//            (without the overlaps one of each; with them a prefetched block
//            beside the one in use, and the dW block computed beside the one
//            reducing: in fp32 one pool of 3, in 2-byte training 2 gathered
//            2-byte blocks and 2 fp32 dW blocks), and one fp32 z-th chunk to
//            receive the dW reduce-scatter;
//   over x > 1, the layer norms' sums, two a row of the residual stream
//            (executor/parallel/sharded_layernorm.cc).
// The largest linear sets each: one layer runs at a time, and the pools grow to
// the largest block they hand out.
#pragma once

#include "model/axo_parameters.h"
#include "model/parallel_config.h"
#include "model/schedule.h"
#include "model/transformer_spec.h"

namespace axo {

double axo_linear_buffer_bytes(const TransformerSpec& spec, const ParallelConfig& config);
// Each layer's own: in 2-byte training every linear keeps an fp32 column of its n_ outputs (its bias
// widened, its dbias summed).
double axo_linear_buffer_bytes_per_layer(const TransformerSpec& spec, const ParallelConfig& config);

// The data-parallel reduction's buffers (executor/parallel/parallel_gpt.cc, zero_optimizer.cc) for a
// rank's `local` parameters of the stage (axo_parameters.h) in `e`-byte storage, `layer` of them one
// layer's (its linears one bucket, its norms and biases another) and `end_bucket` the embedding's (first stage) or the head's (last stage of several), each
// one bucket. Over D = data·context > 1 ranks:
//   zero 0: in 2-byte training each bucket's fp32 copy, all of them until the step: 4 bytes a parameter;
//   zero 1: each unit's received piece until the step, 4/D, and in 2-byte training its fp32 send copy, 4;
//   zero 2: one bucket's units at a time, copied and received, 4·(1 + 1/D) bytes of the largest
//           bucket: a layer's linears', its norms' and biases', or the end bucket; and beside the
//           gradients' shard the buckets the backward fills: on one stage a layer's and the
//           embedding's, on a pipeline's ends the larger.
// With D = 1 every zero reduces as zero 0 does, the buckets summed over Z or Y alone: in 2-byte
// training the fp32 copies of those parameters (AxoParams::summed_beyond_data).
// Not counted: the step's all-gather of the weights (e·(1 + 1/D) of the largest unit, after the
// backward), units not divisible by D copied in fp32 too.
// The pipeline's messages on stage `stage` (executor/parallel/pipeline_schedule.cc), each a
// microbatch's residual stream of `stream` elements in fp32 whatever the training precision: the
// receives it keeps posted (message-driven: one per stream, a forward one for each chunk but the
// model's first and a backward one for each but its last; 1F1B: one) and two sends, the one being
// computed into and the one before it waiting for its receiver (a receiver that lags leaves more
// waiting: up to p of each stream, by timing). None on one stage of one chunk (one stage of several
// chunks passes each chunk's stream to the next through its own messages).
double axo_pipeline_buffer_bytes(const ParallelConfig& config, Schedule schedule, double stream, int64_t stage);

// The tied embedding's sum between a pipeline's first and last stage (parallel_gpt.cc), on each of
// the two after the pipeline has drained: on zero 0's path (zero 0, or one data rank) in 2-byte
// training an fp32 copy of the stage's wte, V'/y × h/x, beside the buckets' copies.
double axo_tied_embedding_bytes(const TransformerSpec& spec, const ParallelConfig& config);

struct AxoDataParallelBytes {
  double comm_buffers = 0, gradients = 0;
};
AxoDataParallelBytes axo_data_parallel_bytes(const ParallelConfig& config, double e, const AxoParams& local,
                                             const AxoParams& layer, double end_bucket);

}  // namespace axo

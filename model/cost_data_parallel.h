// The sixth step of the cost model: the data-parallel gradient all-reduce,
// or with ZeRO (zero >= 1) its reduce-scatter and the parameters' all-gather.
//
// Each rank all-reduces its shard of the fullest stage's gradients over the
// data group, in buckets under the last microbatch's backward, each bucket a
// collective that pays the group's latency (stack.grad_buckets: one per layer,
// as axo's executor and FSDP's blocks; Megatron-Core's max(40M, 1M ×
// data-parallel size) parameters; PyTorch DDP's 25 MiB): of its time, the
// share of all but the last bucket hides under the backward of that stage's
// layers but the last bucket's share (scaled by overlap_efficiency); the last
// bucket is always exposed. After the backward (stack.grad_reduce) it is one
// collective, all exposed. With pipeline > 1 and tied embeddings the first and last stages
// each hold the embedding and all-reduce its gradient (Megatron-LM), exposed.
// With zero >= 1 the all-reduce is a reduce-scatter of the gradients (hidden
// as the all-reduce is; with zero=2 one per microbatch) and an all-gather of
// the updated parameters under the next forward of all but the last layer
// (Megatron-LM's --overlap-grad-reduce and --overlap-param-gather). The
// group, and the shard each rank updates, span data × context (zero_shards,
// memory_model.h). The gradients move in the stack's reduce dtype (stack.reduce_dtype:
// FSDP's fp32 reduction over data as over Z; the model's precision by default);
// fp8 weights kept as the model's own (stack.fp8_weights: primary) are gathered
// in fp8, 1 byte per linear weight (Megatron-Core's --fp8-param-gather).
// axo's own executor (keeps_whole_over_z, cost_collective.h) holds its stage as
// model/axo_parameters.h counts it and sums each part over its own group
// (shard_layout.h's GradientGroup): the linears' Z chunks over data × context,
// what it keeps whole over Z (norms, biases, the embedding and head) over
// z × context × data, under sequence parallelism the norms and positions over
// y × z × context × data, each a reduction of its own (parallel_gpt.cc); with
// ZeRO it all-reduces those over z (y × z) first, then reduce-scatters every
// gradient over data × context (zero_optimizer.cc).
#pragma once

#include "model/cost_layer.h"
#include <cstdint>
#include <vector>

namespace axo {

struct DataParallelStep {
  double local_params = 0;  // parameters of this rank's shard of the fullest stage
  double updated_params = 0;  // parameters this rank's optimizer updates: local_params / (data·context) with zero >= 1
  double all_reduce = 0;    // the gradient all-reduce (reduce-scatter with zero >= 1), whole
  double exposed = 0;       // what the iteration pays: its exposed part plus the tied embedding's
  double window = 0;        // the backward compute the reduction runs under (0: after the backward)
  double last_exposed = 0;  // of the last microbatch's gradient reduction, what is exposed after the backward
};

// `layers`: the layers of each stage; `layer`: one layer's compute (the paced stage's recompute share).
DataParallelStep data_parallel_step(const CostInputs& in, const std::vector<int64_t>& layers,
                                    const LayerCompute& layer, const CostRecorder& record);

}  // namespace axo

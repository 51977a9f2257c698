// The separate gradient accumulation of a stack that does not fuse it into the weight-gradient
// GEMMs (stack.grad_accumulation: separate, model/machine_profile.h): every microbatch, a
// memory-bound kernel adds each parameter's new gradient into the iteration's gradient buffer,
// main_grad += grad (Megatron-LM's local DistributedDataParallel of 2021, its param_hook):
//   bytes = elements · (e + 2r)
// reading the new gradient (e, the model's element bytes) and reading and writing the buffer
// (r each: fp32 where the stack reduces in fp32, else e; stack.reduce_dtype). The elements are
// the gradients the rank holds whole: its (x, y) share of a block or of the embedding, over Z
// when Z shards them. A fused stack accumulates in the GEMMs' output: nothing here.
#pragma once

#include "model/cost_item.h"
#include "model/cost_shapes.h"

namespace axo {

// Records and returns the seconds of one microbatch's accumulation of `elements` weight
// gradients per (x, y) rank; 0 for a fused stack.
double grad_accumulation_seconds(const CostInputs& in, const CostRecorder& record, CostScope scope,
                                 double elements);

}  // namespace axo

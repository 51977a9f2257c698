// The third step of the cost model: the tensor-parallel collectives of one
// layer and how much of them overlap hides.
//
// Per linear layer (ARCHITECTURE.md, "The 4D tensor-parallel linear layer";
// a transposed layer swaps X and Y):
//   forward   all-gather W over Z (prefetched: OAG), all-reduce the partial
//             sums over X (the input's split)
//   backward  all-gather W over Z again (async), all-reduce dX over Y under
//             the dW GEMM (OAR), reduce-scatter dW over Z (async: ORS)
//   recompute (full) the forward's collectives again
// With the stack's weight_gather per_block (FSDP), the Z collectives are one
// per block instead: all-gather the block's weights in forward and again in
// backward (shared with a full recompute), reduce-scatter its gradients.
// With sequence parallelism (x = 1, Megatron-LM) the partial-sum
// all-reduce becomes an all-gather of the input before the plain layers and
// a reduce-scatter after the transposed ones, and backward re-gathers the
// input for dW under the dX GEMM; under fp8 those all-gathers move fp8, the
// reduce-scatters bf16 (cost_fp8.h). With z > 1 these move the rows of this Z
// rank's sequences (tokens per rank already divides by z), over Y alone. Each LayerNorm over a hidden split across X
// all-reduces its mean and variance (fp32) over X.
//
// Exposed, with overlap on: the collectives on the critical path, plus each
// OAR collective beyond its GEMM window, plus the pooled prefetch and async
// traffic beyond the forward GEMMs (forward) or the rest of backward
// (backward); hiding is scaled by the machine's overlap_efficiency. With
// stack.tp_collectives exposed (eager DTensor TP), the OAR collectives are on
// the critical path too: their full time. With overlap off, everything. The
// layer's ring attention over the context group (cost_context.h) adds its
// exposed part to each pass.
#pragma once

#include "model/cost_collective.h"
#include "model/cost_layer.h"

namespace axo {

// Exposed seconds of one layer's tensor-parallel collectives and ring
// attention per microbatch.
struct LayerComm {
  double forward = 0, recompute = 0, backward = 0;
  double total() const { return forward + recompute + backward; }
};

LayerComm layer_comm(const CostInputs& in, const LayerCompute& layer, const CostRecorder& record);

}  // namespace axo
